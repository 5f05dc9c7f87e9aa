"""What a submission is graded on: the acceptance criteria, their points, their outcomes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from labs.checking.checks import CHECKS
from labs.checking.rules import Rule

# Memory checks carry most of the grade: they are what a learner fixes first.
MEMORY_POINTS = 10
POSTGRES_POINTS = 5
TYPECHECK_POINTS = 10
MIGRATION_POINTS = 10
ON_POSTGRES = "on Postgres: "  # how a note on the Postgres checks as a whole begins

Kind = Literal["memory", "postgres", "typecheck", "migration"]  # what a criterion grades


@dataclass(frozen=True)
class Criterion:
    """One graded acceptance criterion."""

    key: str  # stable id, e.g. "memory-3", "typecheck"
    title: str
    points: int
    kind: Kind
    check: int | None = None  # the self-check number, for the check criteria


def _check_criteria() -> list[Criterion]:
    """One criterion for each check on each store."""
    return [
        *(
            Criterion(
                f"memory-{c.number}",
                f"check {c.number} on memory: {c.title}",
                MEMORY_POINTS,
                "memory",
                c.number,
            )
            for c in CHECKS
        ),
        *(
            Criterion(
                f"postgres-{c.number}",
                f"check {c.number} on Postgres: {c.title}",
                POSTGRES_POINTS,
                "postgres",
                c.number,
            )
            for c in CHECKS
        ),
    ]


CRITERIA: list[Criterion] = [
    *_check_criteria(),
    Criterion(
        "typecheck",
        "the tree typechecks: mypy --strict, no explicit Any",
        TYPECHECK_POINTS,
        "typecheck",
    ),
    Criterion(
        "migration",
        "the tree's own migration carries both unique constraints",
        MIGRATION_POINTS,
        "migration",
    ),
]


Status = Literal["pass", "fail", "skip", "error"]  # how a criterion went


class Trouble(StrEnum):
    """Why a check's failure says nothing of the answer: the check never got to judge it."""

    COULD_NOT_RUN = "could not run"  # the tree did not import, or its store did not open
    TIMED_OUT = "timed out"  # stopped at its time limit: an endless loop, a lock never released


@dataclass(frozen=True)
class Outcome:
    """How a submission did on one criterion: pass, fail, skip or error.

    skip: not graded here (no database given); error: not graded because the
    grading machine failed (a server that refuses the grader, say), which is
    never the learner's failure. Neither counts in the score or its maximum;
    both say why in the message. A fail with ran False is a criterion that
    could not run against the tree (it did not import, its store did not
    open, it has no migration to build the tables): it scores 0 like any
    fail, and results.json calls it an error.
    """

    status: Status
    message: str = ""  # why it failed: expected, got and hint, a line each
    output: str = ""  # the kit's details beside the message: a check's last calls, mypy's lines
    test_code: str = ""  # what the criterion does, in a sentence
    printed: str = ""  # what the learner's code printed while it ran (stdout and stderr)
    ran: bool = True
    rules: tuple[Rule, ...] = ()  # the rules a failure broke (labs/checking/rules.py)
    trouble: Trouble | None = None  # set where the check's runner decided it, never from text

    @property
    def passed(self) -> bool:
        """True for a pass."""
        return self.status == "pass"


@dataclass
class Grade:
    """Every criterion's outcome for one submission, and the score they add up to."""

    submission: str
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    broken: str = ""  # why the submission could not be graded at all, if it could not
    notes: list[str] = field(default_factory=list)  # more for an instructor to look at
    outside_regions: list[str] = field(default_factory=list)  # file:line edited outside TODOs

    @property
    def note(self) -> str:
        """Everything worth a look, in one line: why it broke, then the other notes."""
        # A tree that does not import fails on Postgres for the same reason: say it once.
        said: list[str] = []
        for note in (self.broken, *self.notes):
            if note and note.removeprefix(ON_POSTGRES) not in said:
                said.append(note)
        return "; ".join(said)

    def graded(self) -> list[tuple[Criterion, Outcome]]:
        """The criteria that were graded (not skipped, not failed to grade), with their outcomes."""
        return [(c, o) for c, o in self.reported() if o.status != "error"]

    def reported(self) -> list[tuple[Criterion, Outcome]]:
        """The criteria results.json lists: graded ones, and those the grading machine failed."""
        return [
            (c, self.outcomes[c.key])
            for c in CRITERIA
            if c.key in self.outcomes and self.outcomes[c.key].status != "skip"
        ]

    def not_graded(self) -> list[tuple[Criterion, Outcome]]:
        """The criteria the grading machine failed to grade (status error), with why."""
        return [(c, o) for c, o in self.reported() if o.status == "error"]

    @property
    def score(self) -> int:
        """Points earned."""
        return sum(c.points for c, o in self.graded() if o.passed)

    @property
    def max_score(self) -> int:
        """Points available: skipped criteria do not count."""
        return sum(c.points for c, _ in self.graded())
