"""A check's result: the one shape a verdict has, from the driver to every front end.

The driver makes one per check it runs; the CLI prints it, results.json and
the dashboard's report lines carry it, and grading turns it into a
criterion's outcome. It holds what was decided, never how the tree felt
about it: the texts in it were cleaned where they came from the host.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from labs.term.i18n import _
from labs.term.layout import EXPECTED, GOT, HINT

from .hints import Hint
from .rules import Rule
from .trace import Arrow, Event


@dataclass
class CheckResult:
    """One check's verdict: passed or not, why not, where to edit, and what was called."""

    key: str  # "1" .. "6" for the six, a name for an extra check
    number: int | None  # None for an extra check
    title: str
    passed: bool = False
    duration_ms: float = 0.0
    expected: str = ""
    got: str = ""
    hint: Hint | None = None
    events: list[Event] = field(default_factory=list)
    test_code: str = ""  # what the check does, in a sentence (results.json's test_code)
    output: str = ""  # what the tree printed while the check ran: its stdout and stderr, capped
    ran: bool = True  # False when the check could not start: the tree did not import
    rules: tuple[Rule, ...] = ()  # the rules a failure broke (rules.py), for a class report

    @property
    def extra(self) -> bool:
        """Extra checks are shown, never counted in the six."""
        return self.number is None

    @property
    def message(self) -> str:
        """One paragraph for a failure; empty for a pass."""
        if self.passed:
            return ""
        lines = [_(EXPECTED).format(text=self.expected)]
        lines.append(_(GOT).format(text=self.got))
        if self.hint:
            lines.append(_(HINT).format(text=self.hint))
        return "\n".join(lines)

    def trace_lines(self) -> list[str]:
        """The check's calls, one arrow a line, as --trace prints them."""
        marks = {
            Arrow.REPLAY: "[replay] ",
            Arrow.REFUSED: "[refused] ",
            Arrow.ERROR: "[error] ",
            Arrow.THROUGH: "[went through] ",
        }
        return [
            f"{e.source:>7} {'->' if e.kind == Arrow.CALL else '-->'} {e.target:<7} "
            f"{marks.get(e.kind, '')}{e.text}"
            for e in self.events
        ]
