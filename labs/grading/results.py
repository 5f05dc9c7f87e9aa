"""A Grade as results.json (Exercism v3 plus GitHub Classroom's score) and as a points table."""

from __future__ import annotations

import json
from pathlib import Path

from .criteria import CRITERIA, Grade

# Exercism truncates a test's output to this many characters; so do we.
OUTPUT_LIMIT = 500


def results_json(grade: Grade, error: str = "") -> dict[str, object]:
    """Exercism's results.json v3, with score and max_score for GitHub Classroom.

    Skipped criteria (Postgres without a database) are left out of tests and
    of max_score: v3 has no "skipped" status, and they were not graded. The
    top-level message carries the grade's notes even when status is not
    "error"; outside_regions lists the file:line edits outside the TODOs.
    """
    tests: list[dict[str, object]] = []
    for criterion, outcome in grade.graded():
        entry: dict[str, object] = {
            "name": criterion.title,
            "status": outcome.status,
            "message": outcome.message or None,
            "output": outcome.output[:OUTPUT_LIMIT] or None,
            "test_code": outcome.test_code or criterion.key,
            "score": criterion.points if outcome.passed else 0,
            "max_score": criterion.points,
        }
        if criterion.check is not None:
            entry["task_id"] = criterion.check
        tests.append(entry)
    broken = error or grade.broken
    status = (
        "error" if broken else ("pass" if all(t["status"] == "pass" for t in tests) else "fail")
    )
    results: dict[str, object] = {"version": 3, "status": status}
    message = "; ".join(m for m in [error, grade.note] if m)
    if message:
        results["message"] = message
    results |= {"score": grade.score, "max_score": grade.max_score, "tests": tests}
    # Not part of v3: where an instructor should look, for tools that read it.
    results["outside_regions"] = grade.outside_regions
    return results


def write_results_json(grade: Grade, path: Path, error: str = "") -> None:
    """Write results.json for one graded submission."""
    path.write_text(json.dumps(results_json(grade, error), indent=2) + "\n", encoding="utf-8")


def points_table(grade: Grade) -> list[str]:
    """One line per criterion with its points, then the total."""
    lines = [f"{'points':>7}  {'result':<6}  criterion"]
    for criterion in CRITERIA:
        outcome = grade.outcomes.get(criterion.key)
        if outcome is None:
            continue
        earned = (
            "-" if outcome.status == "skip" else (str(criterion.points) if outcome.passed else "0")
        )
        lines.append(
            f"{earned:>3} / {criterion.points:<2}  {outcome.status.upper():<6}  {criterion.title}"
        )
    skipped = sum(o.status == "skip" for o in grade.outcomes.values())
    lines.append(
        f"score: {grade.score} / {grade.max_score}"
        + (f"  ({skipped} criteria skipped, not counted)" if skipped else "")
    )
    return lines
