"""A run of the checks as a Report, and the Report written out: printed live for people, as
JSON Lines for programs, and as results.json v3."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TextIO

from labs.term.i18n import _
from labs.term.layout import failure_lines, marks, terminal_width

from .checks import CHECKS
from .hints import Hint
from .result import CheckResult
from .results_json import TestEntry, TestStatus, results_document
from .trace import Event


@dataclass
class Report:
    """All results of one run of the checks."""

    tree: str
    store: str
    results: list[CheckResult]
    error: str = ""  # set when the checks could not run at all
    seed: int = 0  # the seed the run's inputs were drawn from (--seed N repeats them)

    @property
    def six(self) -> list[CheckResult]:
        """The results that count: checks 1 to 6."""
        return [r for r in self.results if not r.extra]

    @property
    def passed(self) -> int:
        """How many of the six passed."""
        return sum(r.passed for r in self.six)

    @property
    def failed(self) -> int:
        """How many of the six failed; all six when the checks could not run."""
        if self.error:
            return len(CHECKS)
        return sum(not r.passed for r in self.six)

    @property
    def ok(self) -> bool:
        """True when every check that ran among the six passed."""
        return not self.error and self.failed == 0 and self.passed > 0


class LivePrinter:
    """Prints a run as it happens: the header, each check's row as it finishes, the totals.

    The last line is always exactly 'N passed, N failed'.
    """

    def __init__(self, stream: TextIO | None = None, *, trace: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.trace = trace
        self._shown_extra_heading = False

    @property
    def width(self) -> int | None:
        """The width of the terminal printed to, or None when it is not one."""
        return terminal_width(self.stream)

    def _print(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def header(self, tree: str, store: str, seed: int) -> None:
        """The first line: what is checked, on which store, with which seed."""
        self._print(
            _("mini-koda day 8 self-checks: tree {tree}, store {store}, seed {seed}").format(
                tree=tree, store=store, seed=seed
            )
        )

    def result(self, result: CheckResult) -> None:
        """One check's row, with the failure's details and its trace if asked."""
        ok, bad = marks(self.stream)
        if result.extra and not self._shown_extra_heading:
            self._print(_("extra checks (not counted in the six):"))
            self._shown_extra_heading = True
        label = result.key if not result.extra else "+"
        mark = ok if result.passed else bad
        self._print(f"  {label} {mark}  {result.title}  ({result.duration_ms:.0f} ms)")
        for line in failure_lines(result, "        ", terminal_width(self.stream)):
            self._print(line)
        if self.trace and result.events:
            self._print("        " + _("trace:"))
            for line in result.trace_lines():
                self._print(f"          {line}")

    def footer(self, report: Report, points: Sequence[str] = ()) -> None:
        """Why the checks could not run, if so, then `points`, then 'N passed, N failed'."""
        if report.error:
            self._print("  " + _("the checks could not run: {error}").format(error=report.error))
        if report.seed and any(not r.passed for r in report.results):
            self._print(
                "  "
                + _("(repeat this run's inputs with --seed {seed}, or LAB_SEED={seed})").format(
                    seed=report.seed
                )
            )
        for line in points:
            self._print(line)
        # Programs read this line (CI, graders, the dashboard): it stays in English.
        self._print(f"{report.passed} passed, {report.failed} failed")


def results_v3(report: Report) -> dict[str, object]:
    """The Exercism test-runner results.json, version 3, with task_id = check number.

    Each test's output is what the tree printed during that check; the
    checks' own words (expected, got, hint) are its message. A check that
    could not start is an error; a run whose checks could not run at all
    has no tests, status error and the reason as its message.
    """
    tests = [
        TestEntry(
            name=f"{result.key}. {result.title}" if not result.extra else f"extra: {result.title}",
            status=TestStatus.PASS
            if result.passed
            else (TestStatus.FAIL if result.ran else TestStatus.ERROR),
            message=result.message,
            output=result.output,
            test_code=result.test_code,
            task_id=result.number,
        )
        for result in report.results
    ]
    return results_document(tests, message=report.error)


def summary_json(report: Report) -> dict[str, object]:
    """The closing line of a report: totals, and the error if the checks could not run."""
    return {
        "type": LineType.REPORT,
        "tree": report.tree,
        "store": report.store,
        "error": report.error,
        "passed": report.passed,
        "failed": report.failed,
        "ok": report.ok,
        "seed": report.seed,
    }


def result_json(result: CheckResult) -> dict[str, object]:
    """One result with everything a front end draws: status, hint and trace events."""
    hint = result.hint
    return {
        "type": LineType.RESULT,
        "key": result.key,
        "number": result.number,
        "title": result.title,
        "passed": result.passed,
        "duration_ms": round(result.duration_ms, 3),
        "expected": result.expected,
        "got": result.got,
        "message": result.message,
        "hint": {"path": hint.path, "line": hint.line, "text": hint.text} if hint else None,
        "events": [event.as_dict() for event in result.events],
    }


def result_from_json(entry: Mapping[str, Any]) -> CheckResult:
    """A result read back from the line result_json wrote for it (the dashboard's rows)."""
    hint = entry.get("hint")
    return CheckResult(
        key=str(entry["key"]),
        number=entry.get("number"),
        title=str(entry["title"]),
        passed=bool(entry.get("passed")),
        duration_ms=float(entry.get("duration_ms") or 0.0),
        expected=str(entry.get("expected", "")),
        got=str(entry.get("got", "")),
        hint=Hint(str(hint.get("path")), int(hint.get("line") or 1), str(hint.get("text", "")))
        if isinstance(hint, dict)
        else None,
        events=[Event.from_dict(event) for event in entry.get("events", [])],
    )


class LineType(StrEnum):
    """What a line of the JSON Lines report holds (its "type")."""

    RESULT = "result"  # one finished check (result_json)
    REPORT = "report"  # the closing line: the totals (summary_json)


class ReportLines:
    """The full report as JSON Lines: one line per result as it finishes, then a summary.

    Written line by line and flushed, so a reader whose run was killed (a
    learner's infinite loop) still sees every check that finished.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def result(self, result: CheckResult) -> None:
        """Append one finished check."""
        self._write(result_json(result))

    def summary(self, report: Report) -> None:
        """Append the closing line: totals, and the error if the checks could not run."""
        self._write(summary_json(report))

    def _write(self, entry: dict[str, object]) -> None:
        self._stream.write(json.dumps(entry) + "\n")
        self._stream.flush()
