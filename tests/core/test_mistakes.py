"""Each classic learner mistake fails exactly the checks it should, under fresh seeds."""

from __future__ import annotations

import secrets
from pathlib import Path

import psycopg2
import pytest
from sqlalchemy import create_engine, text

from labs.runner import run_checks
from labs.trees import load_tree
from tests.core.mistakes import MISTAKES, Mistake


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_classic_mistake_fails_exactly_its_checks_on_memory(
    mistake: Mistake, tmp_path: Path
) -> None:
    """The checks that fail are the mistake's, the others pass, the hints name TODO lines."""
    tree = mistake.apply(tmp_path)
    seed = secrets.randbelow(1_000_000)
    report = run_checks(str(tree), seed=seed)
    failed = {r.number for r in report.results if not r.passed}
    assert failed == set(mistake.fails), f"seed {seed}: " + "; ".join(
        f"{r.number}: {r.got}" for r in report.results if not r.passed
    )
    for result in report.results:
        if not result.passed:
            assert result.hint is not None
            line = Path(result.hint.path).read_text().splitlines()[result.hint.line - 1]
            assert f"(check {result.number})" in line


def test_a_race_mistake_is_caught_on_every_one_of_several_seeds(tmp_path: Path) -> None:
    """The forced thread switches make the check-then-insert race show on each run, not by luck."""
    (mistake,) = [m for m in MISTAKES if m.name == "check-then-insert-outside-the-lock"]
    tree = mistake.apply(tmp_path)
    for seed in range(4):
        report = run_checks(str(tree), seed=seed, only={"3"})
        assert [r.passed for r in report.results] == [False], f"seed {seed}"


def create_tables(url: str, tree: Path) -> str:
    """Create the tree's tables, as its schema.py declares them, in a schema of its own."""
    loaded = load_tree(str(tree))  # the test's process, not the driver's: tables only
    metadata = loaded.module("shared.schema").TableModel.metadata
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg2://", 1))
    try:
        with engine.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{loaded.package}"'))
            connection.execute(text(f'SET LOCAL search_path TO "{loaded.package}"'))
            metadata.create_all(connection)
    finally:
        engine.dispose()
    return loaded.package


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_classic_mistake_fails_exactly_its_checks_on_postgres(
    mistake: Mistake, tmp_path: Path, fresh_database: str
) -> None:
    """On Postgres, with the mistake's own tables, the checks that fail are the mistake's."""
    tree = mistake.apply(tmp_path)
    schema = create_tables(fresh_database, tree)
    seed = secrets.randbelow(1_000_000)
    report = run_checks(str(tree), "postgres", database_url=fresh_database, seed=seed)
    assert not report.error, report.error
    failed = {r.number for r in report.results if not r.passed}
    assert failed == set(mistake.postgres_fails), f"seed {seed}: " + "; ".join(
        f"{r.number}: {r.got}" for r in report.results if not r.passed
    )
    connection = psycopg2.connect(fresh_database)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'SELECT count(*) FROM "{schema}".runs WHERE status = %s', ("pending",))
            (pending,) = cursor.fetchone()
    finally:
        connection.close()
    assert pending == 0  # the driver's host tidied up after every check
