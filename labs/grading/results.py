"""A Grade as results.json (Exercism v3 plus each test's points) and as a points table.

And, for a learner, the points a run of the checks is worth as `labs grade`
counts them (score_lines), with what did not run named as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from labs.checking.results import TestEntry, results_document
from labs.term.i18n import N_, _
from labs.term.layout import wrapped

from .criteria import CRITERIA, Grade

if TYPE_CHECKING:
    from labs.checking.runner import Report


def results_json(grade: Grade, error: str = "") -> dict[str, object]:
    """Exercism's results.json v3, with each test's score and max_score.

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


def command_for(kind: str, tree: str) -> str:
    """The command that grades one kind of criterion for a learner's tree, and what it needs."""
    return {
        "memory": f"python -m labs check --tree {tree}",
        "postgres": _("{command}, with DATABASE_URL set").format(
            command=f"python -m labs check --tree {tree} --store postgres"
        ),
        "typecheck": "python -m labs typecheck",
        "migration": _("{command}, with DATABASE_URL set and .[grading] installed").format(
            command=f"python -P -m labs.grading.pytest_main --lab-tree {tree} --lab-only migration"
        ),
    }[kind]


def score_lines(
    reports: Mapping[str, Report], tree: str = "starter", width: int | None = None
) -> list[str]:
    """The points `labs grade` would give for the checks that ran, and how to run the rest.

    `reports` maps "memory" or "postgres" to a run of the checks on that
    store. Each part not run here says "not run" with the command that runs
    it, and counts 0 in the total, as it would in a grade. Lines are wrapped
    to width when one is given.
    """
    parts: list[str] = []
    earned = 0
    for kind, label in KINDS:
        criteria = [c for c in CRITERIA if c.kind == kind]
        most = sum(c.points for c in criteria)
        report = reports.get(kind)
        if report is None:
            text = _("not run ({command})").format(command=command_for(kind, tree))
            parts.append(_("{part}: {text}").format(part=_(label), text=text))
            continue
        passed = {r.number for r in report.six if r.passed and not report.error}
        ran = {c.check for c in criteria} if report.error else {r.number for r in report.six}
        points = sum(c.points for c in criteria if c.check in passed)
        earned += points
        text = f"{points} / {most}"
        missing = [str(c.check) for c in criteria if c.check not in ran]
        if missing:
            text += " " + _("(checks {numbers} not run)").format(numbers=", ".join(missing))
        parts.append(_("{part}: {text}").format(part=_(label), text=text))
    total = sum(c.points for c in CRITERIA)
    parts.append(_("total: {earned} / {total}").format(earned=earned, total=total))
    lines = [_("points as `labs grade` would give them:")]
    for part in parts:
        lines += wrapped(part, "  ", width, "      ")
    return lines


KINDS = (
    ("memory", N_("memory")),
    ("postgres", N_("Postgres")),
    ("typecheck", N_("typecheck")),
    ("migration", N_("migration")),
)
