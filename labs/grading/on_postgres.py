"""Grading on Postgres: apply the submission's own migration to a schema of its own.

The checks on Postgres only mean something against the tables the learner's
migration creates, so each grading run migrates a fresh schema from the
submission's migration folder, runs the checks there, and drops the schema
it made (and nothing else).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg2

from ..trees import REPO_ROOT
from .isolate import child_env


class MigrationFailedError(Exception):
    """The submission's migration could not be applied; the message says why."""


def grading_schema(tree: Path) -> str:
    """A schema name no other grading run uses: grade_<tree name>_<random>."""
    stem = re.sub(r"[^a-z0-9_]", "_", tree.name.lower())[:30]
    return f"grade_{stem}_{secrets.token_hex(4)}"


def apply_migration(database_url: str, schema: str, versions: Path, timeout: float) -> None:
    """alembic upgrade head from the submission's folder into schema, in a subprocess."""
    command = [
        sys.executable,
        "-m",
        "alembic",
        "-x",
        "tree=starter",
        "-x",
        f"schema={schema}",
        "-x",
        f"versions={versions}",
        "upgrade",
        "head",
    ]
    try:
        done = subprocess.run(
            command,
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=child_env({"DATABASE_URL": database_url}),
        )
    except subprocess.TimeoutExpired:
        raise MigrationFailedError(f"the migration did not finish within {timeout:g} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise MigrationFailedError("the migration failed: " + (lines[-1] if lines else "?"))


@contextlib.contextmanager
def migrated_schema(database_url: str, tree: Path, versions: Path, timeout: float) -> Iterator[str]:
    """Yield a fresh schema migrated from versions; drop it afterwards."""
    schema = grading_schema(tree)
    try:
        apply_migration(database_url, schema, versions, timeout)
        yield schema
    finally:
        drop_schema(database_url, schema)


def drop_schema(database_url: str, schema: str) -> None:
    """Drop a schema this module created; a database that is gone has nothing to drop."""
    with contextlib.suppress(psycopg2.Error):
        connection = psycopg2.connect(database_url, connect_timeout=5)
        try:
            connection.autocommit = True
            with connection.cursor() as cursor:
                cursor.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            connection.close()
