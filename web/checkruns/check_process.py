"""python -m web.checkruns.check_process: the dashboard's check process, its report in every
language.

It runs what `python -m labs check --extra --report FILE` runs (labs.checking's
run_checks: a driver that never imports the tree, a host that does), and
appends one JSON line per finished check, flushed at once, then a summary
line, as that report does; before each check, a line saying it started.
Each line also carries its texts in every language of the lab ("texts":
{language: {field: text}}), worded as they were written (phrases.py), so
a page shows a run in its own language whichever page pressed Run. It is the
dashboard's own, not a command for people.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TextIO

from labs.checking.api import (
    CHECK_TIMEOUT,
    CheckResult,
    Report,
    StoreKind,
    result_json,
    run_checks,
    summary_json,
)
from labs.term.i18n import use_translations

from .phrases import EveryLanguage, in_every_language

# The "type" of the line written as each check begins (the report's own lines are LineType's).
STARTED = "start"
# The texts of a result that are worded for people, and so are kept in every language. (Its
# message is not: str.join makes plain text of Phrases; the page lays expected and got out.)
WORDED = ("expected", "got")


def texts_of(fields: dict[str, object]) -> dict[str, dict[str, str]]:
    """{language: {field: text}} for the worded fields given."""
    worded = {name: in_every_language(value) for name, value in fields.items()}
    languages = {language for texts in worded.values() for language in texts}
    return {lang: {name: texts[lang] for name, texts in worded.items()} for lang in languages}


def result_line(result: CheckResult) -> dict[str, object]:
    """The report's line for a result, with its worded texts in every language."""
    fields: dict[str, object] = {name: getattr(result, name) for name in WORDED}
    fields["hint"] = result.hint.text if result.hint else ""
    return {**result_json(result), "texts": texts_of(fields)}


def summary_line(report: Report) -> dict[str, object]:
    """The closing line: totals, and why the checks could not run (in every language)."""
    return {**summary_json(report), "texts": texts_of({"error": report.error})}


def write(stream: TextIO, line: dict[str, object]) -> None:
    """Append one line and flush it, so a reader sees it at once."""
    stream.write(json.dumps(line) + "\n")
    stream.flush()


def main(argv: list[str] | None = None) -> int:
    """Run every check on the tree, writing the report; 0 when the six pass, else 1."""
    parser = argparse.ArgumentParser(prog="python -m web.checkruns.check_process")
    parser.add_argument("--tree", required=True)
    parser.add_argument("--store", choices=list(StoreKind), default=StoreKind.MEMORY)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--report", type=Path, required=True)
    parser.add_argument("--check-timeout", type=float, default=CHECK_TIMEOUT)
    args = parser.parse_args(argv)
    use_translations(EveryLanguage())
    with args.report.open("w", encoding="utf-8") as stream:
        report = run_checks(
            args.tree,
            args.store,
            extra=True,
            database_url=args.database_url,
            on_result=lambda result: write(stream, result_line(result)),
            on_start=lambda key: write(stream, {"type": STARTED, "key": key}),
            check_timeout=args.check_timeout,
        )
        write(stream, summary_line(report))
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
