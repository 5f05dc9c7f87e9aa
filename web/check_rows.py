"""The rows of the checks view, from the lines the check process writes to its report.

`python -m labs check --report FILE` appends one JSON line per finished
check, flushed at once, then a summary line. ReportTail reads the lines
completed so far; build_rows shows a run still going, final_rows a run
that ended (however it ended).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labs.checking.checks import CHECKS
from labs.checking.extra import EXTRA_CHECKS
from labs.term.i18n import N_

from .i18n import Localized, Sentence, Verbatim, localized
from .sequence import Diagram, draw_sequence

# Every check the child will run, in its order: the six, then the extras. Their titles are
# the English msgids (the page translates them); a finished check's title is the child's.
PLANNED: list[tuple[str, int | None, str]] = [
    (str(c.number), c.number, c.title) for c in CHECKS
] + [(c.key, None, c.title) for c in EXTRA_CHECKS]
# A row with one of these statuses has its verdict; starting, running and waiting ones do not
# yet. The first row is "starting" until the child says its check began (the child's
# interpreter, and the tree's host, take about a second to start).
FINISHED = ("pass", "fail", "not run")


@dataclass
class CheckRow:
    """One row of the checks view."""

    key: str
    number: int | None
    title: str
    status: str  # pass, fail, not run; while the run goes on: starting, running, waiting
    duration_ms: float | None = None
    # The child's words (in every language: web/check_child.py), or why there is no verdict.
    message: str | Sentence | Localized = ""
    hint: str | Localized = ""
    events: list[dict[str, str]] = field(default_factory=list)

    @property
    def extra(self) -> bool:
        """Extra checks are labelled and never counted in the six."""
        return self.number is None

    @property
    def diagram(self) -> Diagram | None:
        """The sequence diagram of the check's trace, if it recorded one."""
        return draw_sequence(self.events) if self.events else None


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
    results = {e["key"]: e for e in lines if e.get("type") == "result"}
    started = {e.get("key") for e in lines if e.get("type") == "start"}
    rows: list[CheckRow] = []
    for key, number, title in PLANNED:
        entry = results.get(key)
        if entry is not None:
            rows.append(_row_from(entry))
        elif running and all(r.status in FINISHED for r in rows):
            # Between two checks the next one counts as running: only the first one starts.
            rows.append(CheckRow(key, number, title, "running" if started else "starting"))
        else:
            rows.append(CheckRow(key, number, title, "waiting"))
    return rows


def final_rows(
    lines: list[dict[str, Any]], stopped: Sentence
) -> tuple[list[CheckRow], str | Sentence | Localized]:
    """The rows of an ended run, and why it could not finish ('' if it did).

    Checks the child never finished become failed rows; stopped says why it was stopped.
    The reason is shown once, above the rows: only a check stopped while it ran (its
    time ran out, its process died) says it in its own row too.
    """
    results = {e["key"]: e for e in lines if e.get("type") == "result"}
    summary = next((e for e in lines if e.get("type") == "report"), None)
    error: str | Sentence | Localized = (
        stopped
        or reported_error(summary or {})
        or ("" if summary else Sentence(N_("the check process wrote no report")))
    )
    rows: list[CheckRow] = []
    blamed = False
    above = Sentence(N_("not run: the reason is above the rows")) if error else ""
    for key, number, title in PLANNED:
        entry = results.get(key)
        if entry is not None:
            rows.append(_row_from(entry))
        elif not blamed and error:
            # The first check without a result is the one that hung, crashed or never began.
            rows.append(CheckRow(key, number, title, "fail", message=stopped or above))
            blamed = True
        else:
            status = "fail" if error and number is not None else "not run"
            rows.append(CheckRow(key, number, title, status, message=above))
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


def hint_of(entry: dict[str, Any]) -> str | Localized:
    """Where to edit, and what the tree's marker (or the check) says there."""
    hint = entry.get("hint")
    if not isinstance(hint, dict):
        return ""
    where = f"{hint.get('path')}:{hint.get('line')}"
    if "texts" not in entry:
        return f"{where}  {hint.get('text', '')}".strip()
    said = localized(entry["texts"], "hint")
    return Localized({lang: f"{where}  {text}".strip() for lang, text in said.texts.items()})


def _row_from(entry: dict[str, Any]) -> CheckRow:
    return CheckRow(
        key=entry["key"],
        number=entry.get("number"),
        title=entry["title"],
        status="pass" if entry.get("passed") else "fail",
        duration_ms=entry.get("duration_ms"),
        message="" if entry.get("passed") else expected_and_got(entry),
        hint=hint_of(entry),
        events=list(entry.get("events", [])),
    )
