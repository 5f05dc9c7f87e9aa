"""Alembic, per tree: the reference migration goes up, down and up, and matches its models."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.util import CommandError
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool

from labs.pg.catalog import (
    constraints_report,
    latest_migration,
    migration_head,
    psycopg2_url,
    required_constraints,
)
from solution.shared.schema import Run
from tests.support.migrations import alembic_config, migrate, unfixed_starter_migration


def lab_tables(url: str, schema: str) -> set[str]:
    """The lab tables Postgres's catalog shows in schema."""
    return {entry.table for entry in constraints_report(url, schema)}


def test_upgrade_downgrade_and_upgrade_again_all_work(fresh_database: str) -> None:
    """The solution's chain applies, drops everything it made, and applies again."""
    migrate(fresh_database)
    assert lab_tables(fresh_database, "solution") == {"sessions", "runs", "messages"}
    command.downgrade(alembic_config(fresh_database, "solution"), "base")
    assert lab_tables(fresh_database, "solution") == set()
    assert migration_head(fresh_database, "solution") is None
    migrate(fresh_database)
    assert migration_head(fresh_database, "solution") == latest_migration("solution")


def test_both_required_constraints_exist_after_the_solution_migration(fresh_database: str) -> None:
    """pg_catalog shows runs (idempotency_key) and messages (run_id, seq) as unique."""
    migrate(fresh_database)
    found = {
        str(need): need.met_by
        for need in required_constraints(constraints_report(fresh_database, "solution"))
    }
    assert found == {
        "runs (idempotency_key)": "runs_idempotency_key_key",
        "messages (run_id, seq)": "messages_run_id_seq_key",
    }


def test_the_solution_migration_matches_its_models(fresh_database: str) -> None:
    """Autogenerate finds nothing to add or drop after upgrade head: no drift."""
    migrate(fresh_database)
    engine = create_engine(
        psycopg2_url(fresh_database),
        poolclass=NullPool,
        connect_args={"options": "-c search_path=solution"},
    )
    with engine.connect() as connection:
        # The tree's own MetaData, which its table carries (SQLModel leaves __table__ untyped).
        models = Run.__table__.metadata  # type: ignore[attr-defined]
        drift = compare_metadata(MigrationContext.configure(connection), models)
    assert drift == []


def test_the_trees_share_one_database_in_their_own_schemas(
    fresh_database: str, tmp_path: Path
) -> None:
    """Starter and solution migrate side by side; each schema has its tables and its head."""
    migrate(fresh_database)
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database, "starter", tmp_path)
    assert (
        lab_tables(fresh_database, "starter")
        == lab_tables(fresh_database, "solution")
        == {"sessions", "runs", "messages"}
    )
    assert migration_head(fresh_database, "starter") == latest_migration("starter", tmp_path)
    assert migration_head(fresh_database, "solution") == latest_migration("solution")
    assert lab_tables(fresh_database, "public") == set()


def test_the_unfixed_starter_migration_lacks_both_constraints(
    fresh_database: str, tmp_path: Path
) -> None:
    """A migration generated before the TODOs are done carries neither unique constraint."""
    script = unfixed_starter_migration(fresh_database, tmp_path)
    assert "UniqueConstraint" not in script.read_text()
    migrate(fresh_database, "starter", tmp_path)
    needs = required_constraints(constraints_report(fresh_database, "starter"))
    assert [need.present for need in needs] == [False, False]


def test_the_starter_ships_no_migration_and_says_how_to_make_one(fresh_database: str) -> None:
    """upgrade on the starter's empty folder names the revision --autogenerate command."""
    assert latest_migration("starter") is None
    with pytest.raises(CommandError, match=r"alembic -x tree=starter revision --autogenerate"):
        migrate(fresh_database, "starter")


def test_a_missing_tree_option_says_how_to_choose_one(fresh_database: str) -> None:
    """Without -x tree=..., Alembic stops with the option spelled out."""
    config = alembic_config(fresh_database, "solution")
    config.cmd_opts.x = []  # type: ignore[union-attr]
    with pytest.raises(CommandError, match=r"-x tree=starter"):
        command.upgrade(config, "head")


def test_alembic_reads_only_the_chosen_trees_folder(fresh_database: str, tmp_path: Path) -> None:
    """With a starter migration present, the solution's upgrade still sees one head: its own."""
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database)
    migrate(fresh_database, "starter", tmp_path)
    assert migration_head(fresh_database, "solution") != migration_head(fresh_database, "starter")
