"""Fixtures for the dashboard: an app per test, its test client, a tree copy to break, and
a real Postgres holding both trees' migrated schemas."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.pg.catalog import latest_migration
from labs.trees.finding import REPO_ROOT
from tests.support.migrations import clone_database, migrate, unfixed_starter_migration
from tests.support.pgcluster import TempCluster, drop_database_of
from web import create_app

# A pace the eye cannot follow but the threads can: the demo executor in tests.
FAST = {"TESTING": True, "DEMO_PACE": 0.01, "CHECK_TIMEOUT": 60.0, "DATABASE_URL": None}


class PageClient(FlaskClient):
    """A test client that says what a browser says of a request the dashboard's page made.

    The dashboard refuses a state-changing request that names neither its origin
    nor its site; a test that means to send one uses a plain FlaskClient.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.environ_base["HTTP_SEC_FETCH_SITE"] = "same-origin"


def make_app(**overrides: Any) -> Iterator[Flask]:
    """Yield a dashboard app and stop its demo executors afterwards."""
    app = create_app({**FAST, **overrides})
    app.test_client_class = PageClient
    try:
        yield app
    finally:
        app.extensions["mini_koda_lab"].close()


@pytest.fixture
def app() -> Iterator[Flask]:
    """A dashboard on the memory store, with StrictUndefined templates."""
    yield from make_app()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A test client for the dashboard."""
    return app.test_client()


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A private copy of the starter tree that a test may edit or break."""
    target = tmp_path / "learner"
    shutil.copytree(REPO_ROOT / "starter", target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture(scope="session")
def both_trees_template(
    pg_cluster: TempCluster, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str, Path]:
    """A database with both trees migrated, to copy per test.

    Returns its name, the starter's revision, and the folder holding that revision.

    The solution gets its reference migration; the starter gets one generated from its
    schema as shipped (no unique constraints yet), as a learner's first attempt would.
    """
    name = f"koda_web_template_{uuid.uuid4().hex[:8]}"
    url = pg_cluster.create_database(name)
    migrate(url, "solution")
    versions = tmp_path_factory.mktemp("starter_versions")
    unfixed_starter_migration(url, versions)
    migrate(url, "starter", versions)
    revision = latest_migration("starter", versions)
    assert revision, "the starter's generated migration has a revision"
    return name, revision, versions


@pytest.fixture
def both_trees_database(
    pg_cluster: TempCluster, both_trees_template: tuple[str, str, Path]
) -> Iterator[str]:
    """The URL of a fresh database where both trees' tables exist, empty."""
    name = clone_database(pg_cluster, both_trees_template[0])
    yield pg_cluster.url(name)
    drop_database_of(pg_cluster, name)


@pytest.fixture
def starter_revision(both_trees_template: tuple[str, str, Path]) -> str:
    """The revision of the starter's generated migration in both_trees_database."""
    return both_trees_template[1]


@pytest.fixture
def tree_versions(both_trees_template: tuple[str, str, Path]) -> dict[str, Path | None]:
    """Where alembic finds each tree's migrations in both_trees_database (None: the default)."""
    return {"solution": None, "starter": both_trees_template[2]}


@pytest.fixture
def postgres_client(both_trees_database: str) -> Iterator[FlaskClient]:
    """A dashboard whose benches use each tree's SqlStore on both_trees_database."""
    for app in make_app(DATABASE_URL=both_trees_database):
        yield app.test_client()
