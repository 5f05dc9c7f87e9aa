"""The database view on a real Postgres: what the catalog says about each tree's schema."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text

from labs.trees import load_tree

from .conftest import make_app

pytestmark = pytest.mark.postgres


def create_tables(url: str, tree: str) -> None:
    """Create a tree's tables in its own schema, as its migration would (test setup only)."""
    metadata = load_tree(tree).module("shared.schema").TableModel.metadata
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg2://", 1))
    try:
        with engine.begin() as connection:
            connection.execute(text(f'CREATE SCHEMA "{tree}"'))
            metadata.create_all(connection.execution_options(
                schema_translate_map={None: tree}))
            connection.execute(text(
                f'CREATE TABLE "{tree}".alembic_version (version_num text PRIMARY KEY)'))
            connection.execute(text(
                f"INSERT INTO \"{tree}\".alembic_version VALUES ('{tree}_rev_0001')"))
    finally:
        engine.dispose()


def test_the_view_shows_each_trees_unique_constraints_and_head(fresh_database: str) -> None:
    """The solution's schema lists both unique constraints; the starter's shows none."""
    for tree in ("starter", "solution"):
        create_tables(fresh_database, tree)
    for app in make_app(DATABASE_URL=fresh_database):
        page = app.test_client().get("/database").text
    starter, solution = page.split('data-schema="solution"')
    assert "runs_idempotency_key_key" in solution and "messages_run_id_seq_key" in solution
    assert "runs_idempotency_key_key" not in starter and "✗ none" in starter
    assert "solution_rev_0001" in solution and "starter_rev_0001" in starter
    assert "runs_session_id_idx" in solution  # indexes come from pg_indexes
