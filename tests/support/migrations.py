"""A tree's migrations for the tests: Alembic in this process, and databases cloned from a
migrated template.

The root conftest loads this module as a plugin, so its fixtures (`solution_template`,
`solution_database`) reach every folder; tests import its helpers (`migrate`, `run_lab`, ...).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest
from alembic import command
from alembic.config import Config

from labs.trees.finding import REPO_ROOT
from tests.support.pgcluster import TempCluster, drop_database_of


def alembic_config(url: str, tree: str, versions: Path | None = None) -> Config:
    """Alembic's Config, as `alembic -x tree=... [-x versions=...]` builds it from alembic.ini."""
    config = Config(str(REPO_ROOT / "alembic.ini"))
    config.attributes["configure_logger"] = False  # leave pytest's logging alone
    config.set_main_option("sqlalchemy.url", url)
    options = [f"tree={tree}"] + ([f"versions={versions}"] if versions else [])
    config.cmd_opts = argparse.Namespace(x=options)
    return config


def migrate(url: str, tree: str = "solution", versions: Path | None = None) -> None:
    """Run `alembic -x tree=<tree> upgrade head` in this process."""
    command.upgrade(alembic_config(url, tree, versions), "head")


def unfixed_starter_migration(url: str, folder: Path) -> Path:
    """Generate the starter's migration from its schema as shipped (no unique keys) into folder."""
    command.revision(
        alembic_config(url, "starter", folder), message="unfixed starter", autogenerate=True
    )
    (script,) = folder.glob("*.py")
    return script


def clone_database(cluster: TempCluster, template: str) -> str:
    """Create a database copied from template and return its name."""
    name = f"koda_test_{uuid.uuid4().hex[:12]}"
    connection = psycopg2.connect(cluster.url())
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    finally:
        connection.close()
    return name


def run_lab(
    *args: str, database_url: str, selftest: bool = False, schema: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `python -m <args>` as a learner would, on database_url (and DB_SCHEMA), without MOCK."""
    env = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DB_SCHEMA", "TRACE")}
    env["DATABASE_URL"] = database_url
    if schema:
        env["DB_SCHEMA"] = schema
    if selftest:
        env["SELFTEST"] = "1"
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="session")
def solution_template(pg_cluster: TempCluster) -> str:
    """A database with the solution's migration applied, to copy for each test."""
    name = f"koda_template_{uuid.uuid4().hex[:8]}"
    migrate(pg_cluster.create_database(name))
    return name


@pytest.fixture
def solution_database(pg_cluster: TempCluster, solution_template: str) -> Iterator[str]:
    """The URL of a fresh database holding the solution's migrated, empty tables."""
    name = clone_database(pg_cluster, solution_template)
    yield pg_cluster.url(name)
    drop_database_of(pg_cluster, name)
