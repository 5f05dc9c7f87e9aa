"""A pooled connection the server ended is replaced: the insert retries once, on a fresh one."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from labs.pg.cluster import Autocommit
from solution.infra.sql import SqlStore
from tests.support.databases import scalar

# The test's database is the store's alone: its connections are every other one to it.
OTHERS = "datname = current_database() AND pid <> pg_backend_pid()"


@pytest.fixture
def store(migrated_database: str) -> Iterator[SqlStore]:
    """The solution's SqlStore on a migrated database, with one session."""
    made = SqlStore(migrated_database, "solution", pool_size=2)
    yield made
    made.close()


def end_store_connections(database_url: str) -> set[int]:
    """pg_terminate_backend every connection of the store; wait until they are gone."""
    with Autocommit(database_url) as cursor:
        cursor.execute(
            f"SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity WHERE {OTHERS}"
        )
        ended = {int(row[0]) for row in cursor.fetchall()}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (list(ended),)
            )
            row = cursor.fetchone()
            if row is not None and row[0] == 0:
                return ended
            time.sleep(0.02)
    raise AssertionError(f"backends {ended} outlived pg_terminate_backend")


def store_backends(database_url: str) -> set[int]:
    """The pids of the store's connections as the server lists them."""
    with Autocommit(database_url) as cursor:
        cursor.execute(f"SELECT pid FROM pg_stat_activity WHERE {OTHERS}")
        return {int(row[0]) for row in cursor.fetchall()}


@pytest.mark.postgres
def test_connections_ended_while_pooled_cost_the_next_insert_nothing(
    store: SqlStore, migrated_database: str
) -> None:
    """After pg_terminate_backend on the idle pool, create_run succeeds, and so do the reads."""
    session_id = store.create_session("ada", "drops").id
    assert store.create_run(session_id, "first", "key-first").created
    ended = end_store_connections(migrated_database)
    assert ended, "the store held no connection to end"
    again = store.create_run(session_id, "second", "key-second")
    assert again.created and again.run.input == "second"
    # The failed statement renewed the whole pool: what runs next needs no retry of its own.
    assert store.get_run(again.run.id).input == "second"
    assert store.get_session(session_id).title == "drops"
    assert store_backends(migrated_database).isdisjoint(ended)
    assert scalar(migrated_database, "SELECT count(*) FROM solution.runs") == 2


@pytest.mark.postgres
def test_an_insert_retried_on_a_fresh_connection_is_not_stored_twice(
    store: SqlStore, migrated_database: str
) -> None:
    """The dead connection meets the insert; the one retry stores it once, and a replay finds it."""
    session_id = store.create_session("ada", "drops").id
    assert store.create_run(session_id, "first", "key-first").created
    ended = end_store_connections(migrated_database)
    again = store.create_run(session_id, "second", "key-second")
    replay = store.create_run(session_id, "second", "key-second")
    assert again.created and not replay.created and replay.run.id == again.run.id
    assert store_backends(migrated_database).isdisjoint(ended)
    assert scalar(migrated_database, "SELECT count(*) FROM solution.runs") == 2
