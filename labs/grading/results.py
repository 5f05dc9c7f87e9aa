"""A Grade as results.json (Exercism v3 plus GitHub Classroom's score) and as a points table."""

from __future__ import annotations

from labs.checking.results import TestEntry, results_document

from .criteria import CRITERIA, Grade


def results_json(grade: Grade, error: str = "") -> dict[str, object]:
    """Exercism's results.json v3, with score and max_score for GitHub Classroom.

    Skipped criteria (Postgres without a database) are left out of tests and
    of max_score: v3 has no "skipped" status, and they were not graded. The
    top-level message carries the grade's notes even when status is not
    "error"; outside_regions lists the file:line edits outside the TODOs.
    """
    tests = [
        TestEntry(
            name=criterion.title,
            status=outcome.status,
            message=outcome.message,
            output=outcome.output,
            test_code=outcome.test_code or criterion.key,
            task_id=criterion.check,
            score=criterion.points if outcome.passed else 0,
            max_score=criterion.points,
        )
        for criterion, outcome in grade.graded()
    ]
    return results_document(
        tests,
        status="error" if error or grade.broken else None,
        message="; ".join(m for m in [error, grade.note] if m),
        # Not all of v3: the points for Classroom, and where an instructor should look.
        extra={
            "score": grade.score,
            "max_score": grade.max_score,
            "outside_regions": grade.outside_regions,
        },
    )


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
