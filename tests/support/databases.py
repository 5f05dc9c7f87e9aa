"""Migrated databases for the tests that serve the solution, made as the lab's commands make
them (labs.pg.scratch), and counting their rows.

The root conftest loads this module as a plugin, so its fixtures (`migrated_template`,
`migrated_database`) reach every folder.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from labs.pg.cluster import Autocommit, TempCluster
from labs.pg.scratch import migrate
from tests.support.pgcluster import drop_database_of


@pytest.fixture(scope="session")
def migrated_template(pg_cluster: TempCluster) -> str:
    """A database holding the solution's migrated tables, copied for each test."""
    name = f"koda_migrated_{uuid.uuid4().hex[:8]}"
    migrate(pg_cluster.create_database(name), "solution")
    return name


@pytest.fixture
def migrated_database(pg_cluster: TempCluster, migrated_template: str) -> Iterator[str]:
    """The URL of a new database with the solution's empty tables, dropped afterwards."""
    name = f"koda_test_{uuid.uuid4().hex[:12]}"
    with Autocommit(pg_cluster.url()) as cursor:
        cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{migrated_template}"')
    yield pg_cluster.url(name)
    drop_database_of(pg_cluster, name)


def scalar(database_url: str, query: str, *params: object) -> int:
    """Run a one-number query (count(*) and the like), e.g. on solution.runs."""
    with Autocommit(database_url) as cursor:
        cursor.execute(query, params)
        row = cursor.fetchone()
    return int(row[0]) if row else 0
