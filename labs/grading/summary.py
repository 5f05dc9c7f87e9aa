"""A class's grades as a terminal table, a CSV file and a Markdown file.

Names and notes come from learners (a folder name, an exception's text), so
every cell is cleaned first (labs.untrusted.clean_text: no control
characters or terminal escapes, a name's bytes that are not UTF-8 as
`\\xNN`): a note cannot move the cursor, rewrite a row or hide in a CSV cell.
A CSV cell that a spreadsheet would read as a formula (it begins with =, +,
-, @, a tab or a carriage return) is written as text, behind a quote mark.
The files are written as outputs.py writes: never through a planted link.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..untrusted import clean_text
from .criteria import CRITERIA, Criterion, Grade
from .notes import needs_review
from .outputs import write_safely

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

SHORT = {"typecheck": "types", "migration": "migr"}


def columns(grades: list[Grade]) -> list[Criterion]:
    """The criteria graded for at least one submission (Postgres only with a database)."""
    return [
        c
        for c in CRITERIA
        if any(g.outcomes.get(c.key) and g.outcomes[c.key].status != "skip" for g in grades)
    ]


def heading(criterion: Criterion) -> str:
    """A short column name: 1..6 on memory, pg1..pg6 on Postgres, types, migr."""
    if criterion.check is not None:
        return str(criterion.check) if criterion.kind == "memory" else f"pg{criterion.check}"
    return SHORT[criterion.kind]


def cell(grade: Grade, criterion: Criterion) -> str:
    """pass, fail or skip for one criterion of one submission."""
    outcome = grade.outcomes.get(criterion.key)
    return outcome.status if outcome else "-"


def rows(grades: list[Grade]) -> tuple[list[str], list[list[str]]]:
    """The summary as a header and one row per submission."""
    shown = columns(grades)
    header = ["submission", "score", "max", *(heading(c) for c in shown), "review", "note"]
    body = [
        [
            clean_text(g.submission),
            str(g.score),
            str(g.max_score),
            *(cell(g, c) for c in shown),
            "needs review" if needs_review(g) else "",
            clean_text(g.note),
        ]
        for g in grades
    ]
    return header, body


def table_lines(grades: list[Grade]) -> list[str]:
    """The summary as aligned text for a terminal."""
    header, body = rows(grades)
    marks = {"pass": "ok", "fail": "--", "skip": "..", "error": "!!"}
    body = [[*r[:3], *(marks.get(v, v) for v in r[3:-1]), r[-1]] for r in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header) - 1)]
    return [
        "  ".join(value.ljust(width) for value, width in zip(r, widths, strict=False))
        + "  "
        + r[-1]
        for r in [header, *body]
    ]


def as_text(value: str) -> str:
    """A CSV cell a spreadsheet reads as text, never as a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def csv_text(grades: list[Grade]) -> str:
    """One row per submission, one column per criterion (pass/fail), score and note."""
    header, body = rows(grades)
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([as_text(value) for value in row] for row in body)
    return out.getvalue()


def write_csv(grades: list[Grade], path: Path) -> None:
    """The CSV summary, written to path."""
    write_safely(path, csv_text(grades))


def write_markdown(grades: list[Grade], path: Path) -> None:
    """The same summary as a Markdown table."""
    header, body = rows(grades)
    marks = {"pass": "✅", "fail": "❌", "skip": "–", "error": "⚠️"}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in body:
        values = [
            v.replace("|", "\\|") for v in [*r[:3], *(marks.get(v, v) for v in r[3:-1]), r[-1]]
        ]
        lines.append("| " + " | ".join(values) + " |")
    legend = ", ".join(f"{heading(c)} = {c.title}" for c in columns(grades))
    write_safely(path, "# Grades\n\n" + "\n".join(lines) + f"\n\nColumns: {legend}.\n")
