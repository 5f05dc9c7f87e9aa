"""The rows of the checks view, from the lines the check process writes to its report.

`python -m labs check --report FILE` appends one JSON line per finished
check, flushed at once, then a summary line. ReportTail reads the lines
completed so far; build_rows shows a run still going, final_rows a run
that ended (however it ended).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from labs.checking.api import (
    CHECKS,
    EXTRA_CHECKS,
    CheckResult,
    Event,
    Hint,
    LineType,
    result_from_json,
)
from labs.term.i18n import N_
from labs.term.layout import VERDICTS

from ..i18n import Localized, Sentence, Verbatim, _, localized
from ..rendering.sequence import Diagram, draw_sequence
from .check_process import STARTED

# Every check the child will run, in its order: the six, then the extras. Their titles are
# the English msgids (the page translates them); a finished check's title is the child's.
PLANNED: list[tuple[str, int | None, str]] = [(c.key, c.number, c.title) for c in CHECKS] + [
    (c.key, c.number, c.title) for c in EXTRA_CHECKS
]


class RowStatus(StrEnum):
    """A row's verdict, or while the run goes on, how far it has got to the row's check.

    The first row is STARTING until the child says its check began (the child's
    interpreter, and the tree's host, take about a second to start).
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
    # The child's words (in every language: check_process.py), or why there is no verdict.
    message: str | Sentence | Localized = ""
    hint: str | Localized = ""
    reported: bool = False  # whether the result is the one the check's report line gave

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
        """How long the check took, once it has its report line."""
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


class ReportTail:
    """The report's complete lines, read as the child appends them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self) -> list[dict[str, Any]]:
        """The lines completed since the last read; a line still being written waits."""
        try:
            with self.path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:  # the child has not opened it yet
            return []
        self._offset += len(data)
        *complete, self._partial = (self._partial + data).split(b"\n")
        entries = []
        for line in complete:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:  # not the report's: skip it, keep the rest
                continue
        return entries


def build_rows(lines: list[dict[str, Any]], *, running: bool) -> list[CheckRow]:
    """The rows of a run still going: finished checks, the one running (or, before the child
    has begun its first check, starting), the ones waiting."""
    results = {e["key"]: e for e in lines if e.get("type") == LineType.RESULT}
    started = {e.get("key") for e in lines if e.get("type") == STARTED}
    rows: list[CheckRow] = []
    for planned in PLANNED:
        check = CheckResult(*planned)
        entry = results.get(check.key)
        if entry is not None:
            rows.append(_row_from(entry))
        elif running and all(r.status in FINISHED for r in rows):
            # Between two checks the next one counts as running: only the first one starts.
            rows.append(CheckRow(check, RowStatus.RUNNING if started else RowStatus.STARTING))
        else:
            rows.append(CheckRow(check, RowStatus.WAITING))
    return rows


def final_rows(
    lines: list[dict[str, Any]], stopped: Sentence
) -> tuple[list[CheckRow], str | Sentence | Localized]:
    """The rows of an ended run, and why it could not finish ('' if it did).

    Checks the child never finished become failed rows; stopped says why it was stopped.
    The reason is shown once, above the rows: only a check stopped while it ran (its
    time ran out, its process died) says it in its own row too.
    """
    results = {e["key"]: e for e in lines if e.get("type") == LineType.RESULT}
    summary = next((e for e in lines if e.get("type") == LineType.REPORT), None)
    error: str | Sentence | Localized = (
        stopped
        or reported_error(summary or {})
        or ("" if summary else Sentence(N_("the check process wrote no report")))
    )
    rows: list[CheckRow] = []
    blamed = False
    above = Sentence(N_("not run: the reason is above the rows")) if error else ""
    for planned in PLANNED:
        check = CheckResult(*planned)
        entry = results.get(check.key)
        if entry is not None:
            rows.append(_row_from(entry))
        elif not blamed and error:
            # The first check without a result is the one that hung, crashed or never began.
            rows.append(CheckRow(check, RowStatus.FAIL, stopped or above))
            blamed = True
        else:
            failed = error and not check.extra
            rows.append(CheckRow(check, RowStatus.FAIL if failed else RowStatus.NOT_RUN, above))
    return rows, error


def reported_error(summary: dict[str, Any]) -> str | Localized:
    """Why the checks could not run, as the summary line says it (in every language)."""
    if "texts" in summary:
        return localized(summary["texts"], "error")
    return str(summary.get("error", ""))


def expected_and_got(entry: dict[str, Any]) -> str | Sentence:
    """The failure's expected and got lines, in the page's language.

    A report line without its texts in every language (`labs check --report`'s) shows
    its message as the child wrote it.
    """
    message = entry.get("message")
    if "texts" in entry or not isinstance(message, str) or not message:
        texts = entry.get("texts")
        return Sentence(
            N_("expected: %(expected)s\ngot:      %(got)s"),
            expected=localized(texts, "expected")
            if texts
            else Verbatim(str(entry.get("expected", ""))),
            got=localized(texts, "got") if texts else Verbatim(str(entry.get("got", ""))),
        )
    lines = message.split("\n")
    return "\n".join(lines[:-1] if entry.get("hint") else lines)  # the hint is shown apart


def hint_of(entry: dict[str, Any], hint: Hint | None) -> str | Localized:
    """Where to edit, and what the tree's marker (or the check) says there."""
    if hint is None:
        return ""
    if "texts" not in entry:
        return str(hint)
    said = localized(entry["texts"], "hint")
    where = f"{hint.path}:{hint.line}"
    return Localized({lang: f"{where}  {text}".strip() for lang, text in said.texts.items()})


def _row_from(entry: dict[str, Any]) -> CheckRow:
    result = result_from_json(entry)
    return CheckRow(
        result,
        RowStatus.PASS if result.passed else RowStatus.FAIL,
        message="" if result.passed else expected_and_got(entry),
        hint=hint_of(entry, result.hint),
        reported=True,
    )
