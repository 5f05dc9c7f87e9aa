"""The mistakes catalogue: each answer gets the verdict it must, on memory and on Postgres."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg2
import pytest
from sqlalchemy import create_engine, text

from labs.checking.runner import run_checks
from labs.grading.criteria import CRITERIA, Criterion, Outcome
from labs.grading.edits import edits_outside_regions
from labs.grading.grader import Grader
from labs.pg.cluster import TempCluster
from labs.trees.finding import load_tree
from tests.grading.conftest import sandbox_reachable_database
from tests.grading.mistakes.catalogue import CATALOGUE, Answer, build

pytestmark = pytest.mark.slow  # the whole catalogue, on both stores

CHECKS = range(1, 7)
ANSWERS = [pytest.param(a, id=a.name) for a in CATALOGUE]
# Check 3's findings of issue 21, and the answers whose verdict once hung on the clock.
JUDGED_IN_TIME = (
    "key-client-id-branch-reads-the-clock",
    "text-key-reads-the-wall-clock",
    "text-key-windows-an-hour-long",
    "text-key-folds-case",
    "text-key-collapses-spaces",
    "store-finds-the-run-by-its-text",
    "store-says-created-for-a-held-run",
    "key-hashes-time-even-with-a-client-id",
    "text-key-rounds-to-the-nearest-window",
    "text-key-by-the-clocks-minute",
)


@pytest.fixture(scope="module")
def class_server(pg_cluster: TempCluster) -> Iterator[str]:
    """A database the sandboxes' users may reach, named as DATABASE_URL for every answer.

    The grader gives each submission a database of its own on that server and
    drops it afterwards, as for a class; so the answers share the URL.
    """
    with sandbox_reachable_database(pg_cluster) as url:
        yield url


def failing(outcomes: dict[int, Outcome]) -> set[int]:
    """The checks that failed."""
    return {n for n, outcome in outcomes.items() if not outcome.passed}


def test_the_catalogue_has_mistakes_and_correct_but_different_answers() -> None:
    """Both kinds are there, names are unique, every check 3-5 has a mistake, and every
    answer whose verdict once hung on the clock is there."""
    assert len({a.name for a in CATALOGUE}) == len(CATALOGUE)
    assert set(JUDGED_IN_TIME) <= {a.name for a in CATALOGUE}
    assert sum(a.correct for a in CATALOGUE) >= 5
    wrong = [a for a in CATALOGUE if not a.correct]
    for check in (3, 4, 5):
        assert any(check in a.memory_fails | a.postgres_fails for a in wrong), check


@pytest.mark.parametrize("answer", ANSWERS)
def test_each_answer_edits_the_regions_unless_it_says_otherwise(
    tmp_path: Path, answer: Answer
) -> None:
    """Only the answers with `outside` edits differ from the starter outside a region."""
    tree = build(answer, tmp_path / answer.name)
    assert bool(edits_outside_regions(tree)) == bool(answer.outside)


@pytest.fixture(scope="module")
def graders(
    tmp_path_factory: pytest.TempPathFactory, class_server: str
) -> Callable[[Answer], Grader]:
    """Each answer's grader, made once: its tests on memory, on Postgres and of its migration
    read one grading, as a class's run grades each hand-in once."""
    made: dict[str, Grader] = {}

    def grader(answer: Answer) -> Grader:
        if answer.name not in made:
            tree = build(answer, tmp_path_factory.mktemp("mistakes") / answer.name)
            made[answer.name] = Grader(tree, timeout=20.0, database_url=class_server)
        return made[answer.name]

    return grader


@pytest.mark.parametrize("answer", ANSWERS)
def test_each_answer_gets_its_verdict_on_memory(
    graders: Callable[[Answer], Grader], answer: Answer
) -> None:
    """On the memory store exactly the checks the catalogue names fail."""
    grader = graders(answer)
    outcomes = {n: grader.outcome(_criterion("memory", n)) for n in CHECKS}
    assert failing(outcomes) == set(answer.memory_fails), {
        n: o.message for n, o in outcomes.items() if not o.passed
    }


@pytest.mark.parametrize("answer", ANSWERS)
def test_each_answer_gets_its_verdict_on_postgres(
    graders: Callable[[Answer], Grader], answer: Answer
) -> None:
    """On Postgres, with the answer's own migration, exactly the checks named fail."""
    grader = graders(answer)
    outcomes = {n: grader.outcome(_criterion("postgres", n)) for n in CHECKS}
    assert failing(outcomes) == set(answer.postgres_fails), {
        n: o.message for n, o in outcomes.items() if not o.passed
    }


@pytest.mark.parametrize("answer", ANSWERS)
def test_each_answers_migration_gets_its_verdict(
    graders: Callable[[Answer], Grader], answer: Answer
) -> None:
    """The migration criterion, judged from what Postgres holds after the answer's migration
    ran (the run the Postgres checks used)."""
    outcome = graders(answer).outcome(_migration())
    assert outcome.passed == answer.migration_passes, outcome.message


def test_a_failing_checks_hint_points_at_its_todo_line(tmp_path: Path) -> None:
    """Each failure of a mistake in a region hints at that check's TODO line, not at kit code."""
    for name in ("key-not-scoped-to-the-session", "allowlist-with-done-to-running"):
        (answer,) = [a for a in CATALOGUE if a.name == name]
        tree = build(answer, tmp_path / name)
        report = run_checks(str(tree), seed=secrets.randbelow(1_000_000))
        failed = [r for r in report.results if not r.passed]
        assert [r.number for r in failed] == sorted(answer.memory_fails), report.seed
        for result in failed:
            assert result.hint is not None
            line = Path(result.hint.path).read_text().splitlines()[result.hint.line - 1]
            assert f"TODO(check {result.number})" in line


def test_check_5_says_what_it_expected_first_and_why_after(tmp_path: Path) -> None:
    """Unique on seq alone: "expected: seq 0 in a second run to be accepted: the rule is ..."."""
    (answer,) = [a for a in CATALOGUE if a.name == "store-unique-on-seq-alone"]
    report = run_checks(str(build(answer, tmp_path / answer.name)), seed=1)
    (failed,) = [r for r in report.results if not r.passed]
    assert failed.expected == (
        "seq 0 in a second run to be accepted: the rule is one message per (run, seq), "
        "so every run has its own seq 0"
    )


def test_a_lookup_outside_the_lock_is_caught_on_every_one_of_several_seeds(
    tmp_path: Path,
) -> None:
    """The forced thread switches make the check-then-insert race show on each run, not by luck."""
    (answer,) = [a for a in CATALOGUE if a.name == "key-lookup-outside-the-lock"]
    tree = build(answer, tmp_path / answer.name)
    for seed in range(4):
        report = run_checks(str(tree), seed=seed, only={"3"})
        assert [r.passed for r in report.results] == [False], f"seed {seed}"


def create_tables(url: str, tree: Path) -> str:
    """Create the tree's tables, as its schema.py declares them, in a schema of its own."""
    loaded = load_tree(str(tree))  # the test's process, not the driver's: tables only
    metadata = loaded.module("shared.schema").Run.__table__.metadata  # the tree's own registry
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg2://", 1))
    try:
        with engine.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{loaded.package}"'))
            connection.execute(text(f'SET LOCAL search_path TO "{loaded.package}"'))
            metadata.create_all(connection)
    finally:
        engine.dispose()
    return loaded.package


def test_the_checks_leave_no_run_pending_on_postgres(
    tmp_path: Path, reachable_database: str
) -> None:
    """After every check, failing ones too, the driver's host cancels the runs left pending."""
    (answer,) = [a for a in CATALOGUE if a.name == "allowlist-without-pending-to-failed"]
    tree = build(answer, tmp_path / answer.name)
    schema = create_tables(reachable_database, tree)
    report = run_checks(str(tree), "postgres", database_url=reachable_database)
    assert {r.number for r in report.results if not r.passed} == {4}, report.error
    connection = psycopg2.connect(reachable_database)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'SELECT count(*) FROM "{schema}".runs WHERE status = %s', ("pending",))
            row = cursor.fetchone()
            assert row is not None
            (pending,) = row
    finally:
        connection.close()
    assert pending == 0


def _criterion(kind: str, number: int) -> Criterion:
    """The criterion of one check on one store."""
    return next(c for c in CRITERIA if c.kind == kind and c.check == number)


def _migration() -> Criterion:
    """The migration criterion."""
    return next(c for c in CRITERIA if c.kind == "migration")
