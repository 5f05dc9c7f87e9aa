"""A class's grades as a terminal table, a CSV file and a Markdown file.

Names and notes come from learners (a folder name, an exception's text), so
every cell is cleaned first (labs.untrusted.clean_text: no control
characters or terminal escapes, a name's bytes that are not UTF-8 as
`\\xNN`): a note cannot move the cursor, rewrite a row or hide in a CSV cell.
A CSV cell that a spreadsheet would read as a formula (it begins with =, +,
-, @, a tab or a carriage return, after any spaces) is written as text,
behind a quote mark; the Markdown escapes what it would read as markup
(labs.untrusted.markdown_text). Names stay as written (张伟, José Núñez): the
terminal pads them by display width, and grades.csv starts with a byte order
mark, without which Excel reads UTF-8 as the machine's own code page. The
folder column says where each learner's feedback is (feedback.py names it).
The files are written as outputs.py writes: never through a planted link.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import wcwidth

from ..untrusted import clean_text, markdown_text
from .criteria import CRITERIA, Criterion, Grade
from .feedback import FOLDER, folder_names
from .notes import needs_review
from .outputs import write_safely

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
BOM = "\ufeff"
MARKED = 4  # the columns before the criteria: submission, folder, score, max

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
    """The summary as a header and one row per submission, its cells one line each."""
    shown = columns(grades)
    header = [
        "submission",
        "folder",
        "score",
        "max",
        *(heading(c) for c in shown),
        "review",
        "note",
    ]
    folders = folder_names([g.submission for g in grades])
    body = [
        [
            clean_text(g.submission),
            f"{FOLDER}/{folder}",
            str(g.score),
            str(g.max_score),
            *(cell(g, c) for c in shown),
            "needs review" if needs_review(g) else "",
            clean_text(g.note),
        ]
        for g, folder in zip(grades, folders, strict=True)
    ]
    return header, body


def marked(row: list[str], marks: dict[str, str]) -> list[str]:
    """A row with each criterion's status shown as a mark."""
    return [*row[:MARKED], *(marks.get(v, v) for v in row[MARKED:-2]), *row[-2:]]


def table_lines(grades: list[Grade]) -> list[str]:
    """The summary as aligned text for a terminal, padded by display width (张伟 takes four).

    The folder column is left to the files: the table stays narrow enough to read.
    """
    header, body = rows(grades)
    marks = {"pass": "ok", "fail": "--", "skip": "..", "error": "!!"}
    shown = [[r[0], *r[2:]] for r in [header, *(marked(r, marks) for r in body)]]
    widths = [max(wcwidth.width(r[i]) for r in shown) for i in range(len(header) - 2)]
    return [
        "  ".join(wcwidth.ljust(value, width) for value, width in zip(r, widths, strict=False))
        + "  "
        + r[-1]
        for r in shown
    ]


def as_text(value: str) -> str:
    """A CSV cell a spreadsheet reads as text, never as a formula (spaces before it too)."""
    return "'" + value if value.lstrip(" ").startswith(FORMULA_STARTS) else value


def csv_text(grades: list[Grade]) -> str:
    """One row per submission, one column per criterion (pass/fail), score and note."""
    header, body = rows(grades)
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows([as_text(value) for value in row] for row in body)
    return out.getvalue()


def write_csv(grades: list[Grade], path: Path) -> None:
    """The CSV summary, written to path in UTF-8 with a byte order mark (see above)."""
    write_safely(path, BOM + csv_text(grades))


def write_markdown(grades: list[Grade], path: Path) -> None:
    """The same summary as a Markdown table, every cell escaped."""
    header, body = rows(grades)
    marks = {"pass": "✅", "fail": "❌", "skip": "–", "error": "⚠️"}
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in body:
        lines.append("| " + " | ".join(markdown_text(v) for v in marked(r, marks)) + " |")
    legend = ", ".join(f"{heading(c)} = {c.title}" for c in columns(grades))
    write_safely(path, "# Grades\n\n" + "\n".join(lines) + f"\n\nColumns: {legend}.\n")
