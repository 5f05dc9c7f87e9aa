"""The mistakes catalogue: each answer gets the verdict it must, on memory and on Postgres."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from labs.grading.criteria import CRITERIA, Criterion, Outcome
from labs.grading.edits import edits_outside_regions
from labs.grading.grader import Grader
from labs.grading.migration import judge_migration
from tests.grading.mistakes.catalogue import CATALOGUE, Answer, build

CHECKS = range(1, 7)
RULE_CHECKS = (
    "only checks that test the rule (fresh inputs, every status pair, per-session and "
    "per-run scoping, concurrent bursts) give this verdict; the one-sample checks pass it"
)


def answers(store: str) -> list[Any]:
    """Every answer as a parameter, expected to fail while only the rule checks can catch it."""
    params = []
    for answer in CATALOGUE:
        fails = answer.memory_fails if store == "memory" else answer.postgres_fails
        waiting = answer.needs_rule_checks and bool(fails)
        marks = [pytest.mark.xfail(strict=True, reason=RULE_CHECKS)] if waiting else []
        params.append(pytest.param(answer, id=answer.name, marks=marks))
    return params


def failing(outcomes: dict[int, Outcome]) -> set[int]:
    """The checks that failed."""
    return {n for n, outcome in outcomes.items() if not outcome.passed}


def test_the_catalogue_has_mistakes_and_correct_but_different_answers() -> None:
    """Both kinds are there, names are unique, and every check 3-5 has a mistake."""
    assert len({a.name for a in CATALOGUE}) == len(CATALOGUE)
    assert sum(a.correct for a in CATALOGUE) >= 5
    wrong = [a for a in CATALOGUE if not a.correct]
    for check in (3, 4, 5):
        assert any(check in a.memory_fails | a.postgres_fails for a in wrong), check


@pytest.mark.parametrize("answer", [pytest.param(a, id=a.name) for a in CATALOGUE])
def test_each_answer_is_an_edit_inside_the_regions(tmp_path: Path, answer: Answer) -> None:
    """The answers change region bodies only: nothing outside a region differs from the starter."""
    tree = build(answer, tmp_path / answer.name)
    assert edits_outside_regions(tree) == []


@pytest.mark.parametrize("answer", answers("memory"))
def test_each_answer_gets_its_verdict_on_memory(tmp_path: Path, answer: Answer) -> None:
    """On the memory store exactly the checks the catalogue names fail."""
    grader = Grader(build(answer, tmp_path / answer.name), timeout=20.0)
    outcomes = {n: grader.outcome(_criterion("memory", n)) for n in CHECKS}
    assert failing(outcomes) == set(answer.memory_fails), {
        n: o.message for n, o in outcomes.items() if not o.passed
    }


@pytest.mark.parametrize("answer", answers("postgres"))
def test_each_answer_gets_its_verdict_on_postgres(
    tmp_path: Path, fresh_database: str, answer: Answer
) -> None:
    """On Postgres, with the answer's own migration, exactly the checks named fail."""
    tree = build(answer, tmp_path / answer.name)
    grader = Grader(tree, timeout=20.0, database_url=fresh_database)
    outcomes = {n: grader.outcome(_criterion("postgres", n)) for n in CHECKS}
    assert failing(outcomes) == set(answer.postgres_fails), {
        n: o.message for n, o in outcomes.items() if not o.passed
    }


@pytest.mark.parametrize("answer", [pytest.param(a, id=a.name) for a in CATALOGUE])
def test_each_answers_migration_gets_its_verdict(
    tmp_path: Path, fresh_database: str, answer: Answer
) -> None:
    """The migration criterion, judged on Postgres after the answer's migration ran."""
    tree = build(answer, tmp_path / answer.name)
    outcome = judge_migration(tree, database_url=fresh_database, timeout=60.0)
    assert outcome.passed == answer.migration_passes, outcome.message


def _criterion(kind: str, number: int) -> Criterion:
    """The criterion of one check on one store."""
    return next(c for c in CRITERIA if c.kind == kind and c.check == number)
