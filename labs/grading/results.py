"""A Grade as results.json (Exercism v3 plus GitHub Classroom's score) and as a points table."""

from __future__ import annotations

from labs.checking.results import TestEntry, results_document

from .criteria import CRITERIA, Grade


def results_json(grade: Grade, error: str = "") -> dict[str, object]:
    """Exercism's results.json v3, with score and max_score for GitHub Classroom.

    Skipped criteria (Postgres without a database) are left out of tests and
    of max_score: v3 has no "skipped" status, and they were not graded.
    Criteria the grading machine failed to grade are in tests as "error" and
    make the whole document's status "error", and count in neither score. The
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
        for criterion, outcome in grade.reported()
    ]
    return results_document(
        tests,
        # A criterion the grading machine could not grade makes the whole run an error.
        status="error" if error or grade.broken or grade.not_graded() else None,
        # A reason the notes give already (a criterion not graded) is said once.
        message="; ".join(m for m in [error if error not in grade.note else "", grade.note] if m),
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
            "-"
            if outcome.status in ("skip", "error")
            else (str(criterion.points) if outcome.passed else "0")
        )
        lines.append(
            f"{earned:>3} / {criterion.points:<2}  {outcome.status.upper():<6}  {criterion.title}"
        )
    skipped = sum(o.status == "skip" for o in grade.outcomes.values())
    lines.append(
        f"score: {grade.score} / {grade.max_score}"
        + (f"  ({skipped} criteria skipped, not counted)" if skipped else "")
    )
    # Said once per reason: the points no one could grade are named, never silently lost.
    for reason in dict.fromkeys(o.message for _c, o in grade.not_graded()):
        lines.append(reason if reason.startswith("not graded") else f"not graded: {reason}")
    return lines
