"""The migration criterion without DATABASE_URL: run on a throwaway cluster, or not graded.

Reading the scripts would add up the constraints they create and miss what a
later script drops; running them leaves Postgres to say what holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.grading import on_postgres_throwaway
from labs.grading.migration import THROWAWAY
from labs.grading.on_postgres_checks import judge_migration
from labs.pg.cluster import TempCluster
from tests.grading import submissions as make
from tests.grading.postgres_help import with_real_migration

DROPS_THE_RUNS_KEY = '''"""a later migration: the runs key goes"""
from alembic import op

revision = "0002"
down_revision = "212d00d01876"


def upgrade() -> None:
    op.drop_constraint("runs_idempotency_key_key", "runs", type_="unique")
'''


def test_a_later_migration_that_drops_the_runs_key_fails_without_a_database(
    tmp_path: Path, pg_cluster: TempCluster
) -> None:
    """Both scripts run, in order, on the grader's own cluster: the dropped key is missing."""
    tree = make.starter_copy(tmp_path / "ada")
    first = with_real_migration(tree)
    (first.parent / "0002_drop_key.py").write_text(DROPS_THE_RUNS_KEY, encoding="utf-8")
    outcome = judge_migration(tree)
    assert outcome.status == "fail"
    assert "runs.idempotency_key" in outcome.message
    assert "messages (run_id, seq)" not in outcome.message
    assert outcome.output.startswith(THROWAWAY)


def test_the_reference_migration_passes_without_a_database(
    tmp_path: Path, pg_cluster: TempCluster
) -> None:
    """The solution's migration alone earns the criterion on the throwaway cluster."""
    tree = make.starter_copy(tmp_path / "ben")
    with_real_migration(tree)
    outcome = judge_migration(tree)
    assert outcome.status == "pass", outcome.message
    assert outcome.output.startswith(THROWAWAY)


def test_without_a_database_or_server_binaries_the_migration_is_not_graded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No server to run it on: "not graded", saying how to get one, and never a pass."""
    monkeypatch.setattr(on_postgres_throwaway, "find_bindir", lambda: None)
    tree = make.starter_copy(tmp_path / "cho")
    with_real_migration(tree)
    outcome = judge_migration(tree)
    assert outcome.status == "skip"
    assert outcome.message.startswith("not graded: no database")
    assert "DATABASE_URL" in outcome.message and "apt-get install postgresql" in outcome.message
