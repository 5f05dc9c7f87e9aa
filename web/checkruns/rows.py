"""The rows of the checks view, from the results of a check run as they come.

run_checks hands each CheckResult over as its check finishes, its texts
worded in every language (phrases.py). build_rows shows a run still going,
final_rows a run that ended (however it ended).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from labs.checking.api import CHECKS, EXTRA_CHECKS, CheckResult, Event, Report
from labs.term.i18n import N_
from labs.term.layout import VERDICTS

from ..i18n import Localized, Sentence, _
from ..rendering.sequence import Diagram, draw_sequence
from .phrases import in_every_language

# Every check a run runs, in its order: the six, then the extras. Their titles are the
# English msgids (the page translates them); a finished check's title is its result's.
PLANNED: list[tuple[str, int | None, str]] = [(c.key, c.number, c.title) for c in CHECKS] + [
    (c.key, c.number, c.title) for c in EXTRA_CHECKS
]


class RowStatus(StrEnum):
    """A row's verdict, or while the run goes on, how far it has got to the row's check.

    The first row is STARTING until its check began (the tree's host takes about
    a second to start).
    """

    PASS = "pass"
    FAIL = "fail"
    NOT_RUN = "not run"
    STARTING = "starting"
    RUNNING = "running"
    WAITING = "waiting"


# A row with one of these statuses has its verdict; starting, running and waiting ones do not.
FINISHED = (RowStatus.PASS, RowStatus.FAIL, RowStatus.NOT_RUN)
# What a row without a verdict says in its mark's place: how far the run has got to it.
PROGRESS = {
    RowStatus.RUNNING: N_("… RUNNING"),
    RowStatus.STARTING: N_("… STARTING"),
    RowStatus.WAITING: N_("· WAITING"),
    RowStatus.NOT_RUN: N_("– NOT RUN"),
}


@dataclass
class CheckRow:
    """One row of the checks view: a check's result, and how far the run has got to it.

    Until its line comes, the result is the check alone (its key, number and title).
    """

    result: CheckResult
    status: RowStatus
    # The check's words (in every language: phrases.py), or why there is no verdict.
    message: str | Sentence | Localized = ""
    hint: str | Localized = ""
    reported: bool = False  # whether the result is the check's own (it finished)

    @property
    def key(self) -> str:
        """The check's key: its number, or an extra check's name."""
        return self.result.key

    @property
    def number(self) -> int | None:
        """The check's number (None for an extra check)."""
        return self.result.number

    @property
    def title(self) -> str:
        """The check's title, an English msgid the page translates."""
        return self.result.title

    @property
    def extra(self) -> bool:
        """Extra checks are labelled and never counted in the six."""
        return self.result.extra

    @property
    def duration_ms(self) -> float | None:
        """How long the check took, once it finished."""
        return self.result.duration_ms if self.reported else None

    @property
    def events(self) -> list[Event]:
        """The calls the check's trace recorded."""
        return self.result.events

    @property
    def mark(self) -> str:
        """The row's verdict with its mark, or how far the run has got, in the page's language."""
        if self.status in (RowStatus.PASS, RowStatus.FAIL):
            mark, word = VERDICTS[self.status == RowStatus.PASS]
            return f"{mark} {_(word)}"
        return _(PROGRESS.get(self.status, PROGRESS[RowStatus.NOT_RUN]))

    @property
    def diagram(self) -> Diagram | None:
        """The sequence diagram of the check's trace, if it recorded one."""
        return draw_sequence([e.as_dict() for e in self.events]) if self.events else None


def build_rows(results: Sequence[CheckResult], *, started: bool, running: bool) -> list[CheckRow]:
    """The rows of a run still going: finished checks, the one running (or, before the run
    has begun its first check, starting), the ones waiting."""
    finished = {result.key: result for result in results}
    rows: list[CheckRow] = []
    for planned in PLANNED:
        check = CheckResult(*planned)
        result = finished.get(check.key)
        if result is not None:
            rows.append(row_of(result))
        elif running and all(r.status in FINISHED for r in rows):
            # Between two checks the next one counts as running: only the first one starts.
            rows.append(CheckRow(check, RowStatus.RUNNING if started else RowStatus.STARTING))
        else:
            rows.append(CheckRow(check, RowStatus.WAITING))
    return rows


def final_rows(
    results: Sequence[CheckResult], report: Report | None, stopped: Sentence | Localized
) -> tuple[list[CheckRow], str | Sentence | Localized]:
    """The rows of an ended run, and why it could not finish ('' if it did).

    report is what run_checks returned (None if it never returned); stopped says why
    the run was stopped (its time ran out, the dashboard shut down, a bug). Checks that
    never finished become failed rows. The reason is shown once, above the rows: only
    the check stopped while it ran says it in its own row too.
    """
    finished = {result.key: result for result in results}
    error: str | Sentence | Localized = stopped or (
        reported_error(report) if report is not None else ""
    )
    rows: list[CheckRow] = []
    blamed = False
    above = Sentence(N_("not run: the reason is above the rows")) if error else ""
    for planned in PLANNED:
        check = CheckResult(*planned)
        result = finished.get(check.key)
        if result is not None:
            rows.append(row_of(result))
        elif not blamed and error:
            # The first check without a result is the one that hung, crashed or never began.
            rows.append(CheckRow(check, RowStatus.FAIL, stopped or above))
            blamed = True
        else:
            failed = error and not check.extra
            rows.append(CheckRow(check, RowStatus.FAIL if failed else RowStatus.NOT_RUN, above))
    return rows, error


def in_each_language(text: object) -> Localized:
    """A text run_checks wrote (a Phrase, or plain text), shown in the page's language."""
    return Localized(in_every_language(text))


def reported_error(report: Report) -> Localized:
    """Why the checks could not run, as the report says it (in every language)."""
    return in_each_language(report.error)


def expected_and_got(result: CheckResult) -> Sentence:
    """The failure's expected and got lines, in the page's language."""
    return Sentence(
        N_("expected: {expected}\ngot:      {got}"),
        expected=in_each_language(result.expected),
        got=in_each_language(result.got),
    )


def hint_of(result: CheckResult) -> str | Localized:
    """Where to edit, and what the tree's marker (or the check) says there."""
    hint = result.hint
    if hint is None:
        return ""
    where = f"{hint.path}:{hint.line}"
    said = in_every_language(hint.text)
    return Localized({lang: f"{where}  {text}".strip() for lang, text in said.items()})


def row_of(result: CheckResult) -> CheckRow:
    """The row of a finished check."""
    return CheckRow(
        result,
        RowStatus.PASS if result.passed else RowStatus.FAIL,
        message="" if result.passed else expected_and_got(result),
        hint=hint_of(result),
        reported=True,
    )
