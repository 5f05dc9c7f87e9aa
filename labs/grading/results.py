"""A Grade as results.json (Exercism v3 plus each test's points), and the total people read.

One definition of the total, which the self-check (score_lines, from runs of
the checks) and the grader (points_table, from a Grade) both print: the
points earned over the points of the criteria graded in this run, then one
line per reason naming what was not graded here and why (the command that
grades it, or what stopped the grader). What was not graded counts in
neither number, so the same tree graded on the same criteria gets the same
total from both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from labs.checking.checks import CHECKS
from labs.checking.driver import what_it_does
from labs.checking.results_json import TestEntry, TestStatus, results_document
from labs.term.i18n import N_, _, ngettext
from labs.term.layout import wrapped

from .criteria import CRITERIA, Criterion, Grade, Outcome

if TYPE_CHECKING:
    from labs.checking.report import Report

KINDS = (
    ("memory", N_("memory")),
    ("postgres", N_("Postgres")),
    ("typecheck", N_("typecheck")),
    ("migration", N_("migration")),
)
# What the two criteria that are not checks do (results.json's test_code); grades are English.
DOES = {
    "typecheck": "mypy --strict --disallow-any-explicit over the tree, with the kit's settings: "
    "no type error in the tree's own files",
    "migration": "the tree's own Alembic migration runs in an empty schema; Postgres must then "
    "enforce one row per runs.idempotency_key and one per messages (run_id, seq)",
}
NOT_GRADED = "not graded: "  # how the grader begins a reason it could not grade
WHY_SHOWN = 3  # a kind's reasons for its failures shown under its points, at most


def results_json(grade: Grade, error: str = "") -> dict[str, object]:
    """Exercism's results.json v3, with each counted test's score and max_score.

    Skipped criteria (Postgres without a database) are left out: v3 has no
    "skipped" status, and they were not graded. A test is "error" when it
    could not run: against the tree (it did not import, no tables of its
    own), which scores 0 of its points like a fail, or on the grading
    machine, which counts in neither score (no score, no max_score). The
    document is "error" only when no test ran, and only then has a
    top-level message; the notes an instructor should read are always in
    `note`, and outside_regions lists the file:line edits outside the TODOs.
    """
    said = "; ".join(m for m in [error if error not in grade.note else "", grade.note] if m)
    return results_document(
        [entry_for(criterion, outcome) for criterion, outcome in grade.reported()],
        message=said,
        # Not all of v3: the points for Classroom, and where an instructor should look.
        extra={
            "score": grade.score,
            "max_score": grade.max_score,
            "note": said or None,
            "outside_regions": grade.outside_regions,
        },
    )


def entry_for(criterion: Criterion, outcome: Outcome) -> TestEntry:
    """One criterion as a v3 test: its verdict, the kit's words, the learner's own output.

    A criterion that could not run against the tree (it did not import, no tables of its
    own, a hand-in that could not be taken in) is an error that scores 0.
    """
    counted = outcome.status != "error"  # the grading machine's failure counts for nothing
    status = (
        TestStatus.PASS
        if outcome.passed
        else (TestStatus.FAIL if counted and outcome.ran else TestStatus.ERROR)
    )
    # The kit's details (a check's last calls, mypy's lines) follow the failure they explain.
    said = "" if outcome.passed else "\n\n".join(t for t in (outcome.message, outcome.output) if t)
    return TestEntry(
        name=criterion.title,
        status=status,
        message=said,
        output=outcome.printed,
        test_code=outcome.test_code or does(criterion),
        task_id=criterion.check,
        score=(criterion.points if outcome.passed else 0) if counted else None,
        max_score=criterion.points if counted else None,
    )


def does(criterion: Criterion) -> str:
    """What a criterion does, in a sentence: a check's own docstring, or DOES."""
    if criterion.check is None:
        return DOES[criterion.kind]
    return what_it_does(CHECKS[criterion.check - 1])


@dataclass
class Tally:
    """A run's criteria: those graded (key -> passed), and why each other was not graded."""

    graded: dict[str, bool] = field(default_factory=dict)
    not_graded: dict[str, str] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # a failed typecheck's or migration's reason

    @classmethod
    def of_grade(cls, grade: Grade) -> Tally:
        """The grader's: a skipped criterion, or one the machine failed, was not graded."""
        tally = cls()
        for criterion in CRITERIA:
            outcome = grade.outcomes.get(criterion.key)
            if outcome is None:
                tally.not_graded[criterion.key] = _("left out by --lab-only")
            elif outcome.status in ("skip", "error"):
                tally.not_graded[criterion.key] = outcome.message.removeprefix(NOT_GRADED)
            else:
                tally.graded[criterion.key] = outcome.passed
        return tally

    @classmethod
    def of_reports(
        cls, reports: Mapping[str, Report], tree: str, others: Mapping[str, Outcome] | None = None
    ) -> Tally:
        """The self-check's: the checks of each run, and the grader's other verdicts, counted
        as the grader counts them.

        A run whose checks could not run at all (the tree does not import)
        fails each of them, as a grade does. `others` holds the grader's own
        outcomes of the criteria not run here (self_total.py): one the machine
        could not give is not graded, for its reason. A check a run left out,
        and every criterion neither run nor given, says the command that runs it.
        """
        tally = cls()
        others = others or {}
        for criterion in CRITERIA:
            report = reports.get(criterion.kind)
            ran = {} if report is None else {r.number: r.passed for r in report.six}
            other = others.get(criterion.key)
            if report is not None and report.error:
                tally.graded[criterion.key] = False
            elif criterion.check in ran:
                tally.graded[criterion.key] = ran[criterion.check]
            elif other is not None and other.status in ("pass", "fail"):
                tally.graded[criterion.key] = other.passed
                if not other.passed:
                    tally.why[criterion.key] = other.message.partition("\n")[0]
            elif other is not None:
                tally.not_graded[criterion.key] = other.message.removeprefix(NOT_GRADED)
            else:
                command = command_for(criterion.kind, tree)
                tally.not_graded[criterion.key] = _("run it with {command}").format(command=command)
        return tally

    def lines(self, width: int | None = None) -> list[str]:
        """Each kind's points, the total, then a line per reason something was not graded."""
        points = {c.key: c.points for c in CRITERIA}
        parts = []
        for kind, label in KINDS:
            keys = [c.key for c in CRITERIA if c.kind == kind and c.key in self.graded]
            if keys:
                earned = sum(points[k] for k in keys if self.graded[k])
                most = sum(points[k] for k in keys)
                parts.append(
                    _("{part}: {earned} / {most}").format(part=_(label), earned=earned, most=most)
                )
                reasons = dict.fromkeys(self.why[k] for k in keys if self.why.get(k))
                parts += [f"  {reason}" for reason in list(reasons)[:WHY_SHOWN]]
        earned = sum(points[k] for k, passed in self.graded.items() if passed)
        most = sum(points[k] for k in self.graded)
        parts.append(_("total: {earned} / {total}").format(earned=earned, total=most))
        for why in dict.fromkeys(self.not_graded.values()):
            keys = [k for k, reason in self.not_graded.items() if reason == why]
            parts.append(
                _("not graded here: {parts} ({points} points): {why}").format(
                    parts=", ".join(named_parts(keys)), points=sum(points[k] for k in keys), why=why
                )
            )
        lines = []
        for part in parts:
            lines += wrapped(part, "  ", width, "      ")
        return lines


def named_parts(keys: list[str]) -> list[str]:
    """Criteria as a reader names them: a whole kind by its name, else its checks by number."""
    named = []
    for kind, label in KINDS:
        mine = [c for c in CRITERIA if c.kind == kind]
        chosen = [c for c in mine if c.key in keys]
        if not chosen:
            continue
        if len(chosen) == len(mine):
            named.append(_(label))
            continue
        numbers = ", ".join(str(c.check) for c in chosen)
        template = ngettext("check {numbers} on {part}", "checks {numbers} on {part}", len(chosen))
        named.append(template.format(numbers=numbers, part=_(label)))
    return named


def points_table(grade: Grade) -> list[str]:
    """One line per criterion graded with its points, then the total as the self-check says it."""
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
    return lines + Tally.of_grade(grade).lines()


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
    reports: Mapping[str, Report],
    tree: str = "starter",
    width: int | None = None,
    others: Mapping[str, Outcome] | None = None,
) -> list[str]:
    """The points `labs grade` gives for the checks that ran here, and what was not graded.

    `reports` maps "memory" or "postgres" to a run of the checks on that
    store. The total is the grader's (see the module's docstring): the
    criteria not run here count in neither number, each named on a line of
    its own with the command that grades it. `others` are the grader's
    verdicts on the criteria not run here (self_total.py). Lines are wrapped
    to width when one is given.
    """
    return [
        _("points as `labs grade` would give them:"),
        *Tally.of_reports(reports, tree, others).lines(width),
    ]
