"""The kit ships the Alembic environment: learners' commands and labs.pg.migrate reach it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from labs.pg.catalog import constraints_report, latest_migration, migration_head
from labs.trees.finding import REPO_ROOT

SOLUTION_VERSIONS = REPO_ROOT / "migrations" / "versions" / "solution"


def run(folder: Path, database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python ARGS` from folder with only DATABASE_URL set for the lab, as a person types it."""
    env = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DB_SCHEMA")}
    env["DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lab_tables(url: str, schema: str) -> set[str]:
    """The lab tables Postgres's catalog shows in schema."""
    return {entry.table for entry in constraints_report(url, schema)}


def test_the_learners_two_commands_write_and_apply_beside_alembic_ini(
    tmp_path: Path, fresh_database: str
) -> None:
    """revision --autogenerate writes into migrations/versions/starter beside alembic.ini; upgrade
    head applies it in the starter's schema, the environment coming from the kit."""
    checkout = tmp_path / "checkout"
    (checkout / "migrations" / "versions" / "starter").mkdir(parents=True)
    shutil.copyfile(REPO_ROOT / "alembic.ini", checkout / "alembic.ini")
    alembic = ("-m", "alembic", "-x", "tree=starter")
    made = run(
        checkout, fresh_database, *alembic, "revision", "--autogenerate", "-m", "create tables"
    )
    assert made.returncode == 0, made.stderr
    (script,) = (checkout / "migrations" / "versions" / "starter").glob("*.py")
    assert script.name.endswith("_create_tables.py")
    assert "Revision ID:" in script.read_text(encoding="utf-8")  # from the kit's script.py.mako
    applied = run(checkout, fresh_database, *alembic, "upgrade", "head")
    assert applied.returncode == 0, applied.stderr
    assert lab_tables(fresh_database, "starter") == {"sessions", "runs", "messages"}
    assert lab_tables(fresh_database, "public") == set()


def test_migrate_applies_a_folder_from_anywhere_without_an_ini_file(
    tmp_path: Path, fresh_database: str
) -> None:
    """python -m labs.pg.migrate, from a folder with no alembic.ini, builds the schema it names."""
    args = ["--versions", str(SOLUTION_VERSIONS), "--schema", "graded", "--tree", "solution"]
    done = run(tmp_path, fresh_database, "-m", "labs.pg.migrate", *args)
    assert done.returncode == 0, done.stderr
    assert lab_tables(fresh_database, "graded") == {"sessions", "runs", "messages"}
    assert migration_head(fresh_database, "graded") == latest_migration("solution")
    assert lab_tables(fresh_database, "solution") == set()


def test_migrate_exits_1_with_alembics_reason_in_one_line(
    tmp_path: Path, fresh_database: str
) -> None:
    """A folder with no migration: exit 1 and Alembic's FAILED line naming it, no traceback."""
    empty = tmp_path / "versions"
    empty.mkdir()
    done = run(tmp_path, fresh_database, "-m", "labs.pg.migrate", "--versions", str(empty))
    assert done.returncode == 1
    assert done.stderr.startswith(f"FAILED: {empty} holds no migration yet")
    assert "Traceback" not in done.stderr


def test_migrate_without_a_database_says_how_to_set_one(tmp_path: Path) -> None:
    """No DATABASE_URL: exit 1 with the environment's own advice, not a driver's traceback."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    args = ["-m", "labs.pg.migrate", "--versions", str(SOLUTION_VERSIONS), "--tree", "solution"]
    done = subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.startswith("FAILED: set DATABASE_URL first")
    assert "Traceback" not in done.stderr
