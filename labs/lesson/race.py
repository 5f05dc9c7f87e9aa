"""The anti-pattern, made visible: check-then-insert against the unique constraint.

Many clients send the same request at the same moment. The naive path asks
"is there a run for this key?" and inserts when the answer is no; the
guarded path asks the same question but lets the unique constraint decide
(INSERT ... ON CONFLICT DO NOTHING, then read back the winner). Both run on
demonstration tables in a schema of their own, created here and dropped
afterwards: the naive table has no unique constraint, which no tree may
ever copy. An optional pause between the check and the insert holds the
window open, so the naive path loses every time instead of now and then.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import psycopg2
from ulid import ULID

from labs.term.i18n import N_

# The paths' names, kept in English in the outcome (the dashboard reads them as data) and
# translated where they are shown, with _(outcome.naive.path).
NAIVE = N_("naive check-then-insert")
GUARDED = N_("unique constraint (ON CONFLICT)")

# Limits shared by `python -m labs race` and the dashboard's race form: each request holds a
# connection of its own (Postgres allows 100 by default, a few reserved), and the pause is
# there to be seen, not waited on.
MIN_REQUESTS, MAX_REQUESTS = 2, 64
MAX_DELAY_MS = 1000

# One client's attempt: (cursor, table, idempotency key, pause in seconds) -> the runId answered.
CreateRun = Callable[[psycopg2.extensions.cursor, str, str, float], str]


@dataclass(frozen=True)
class PathOutcome:
    """What one path left behind: rows for the key, and ids the clients were told."""

    path: str
    requests: int
    rows: int
    distinct_run_ids: int

    @property
    def duplicates(self) -> int:
        """Rows beyond the one the key should have."""
        return max(self.rows - 1, 0)


@dataclass(frozen=True)
class RaceOutcome:
    """Both paths under the same load, side by side."""

    requests: int
    delay_ms: float
    naive: PathOutcome | None
    guarded: PathOutcome | None

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view, for the dashboard."""
        return asdict(self)


def run_race(
    database_url: str,
    requests: int = 32,
    delay_ms: float = 20.0,
    *,
    naive: bool = True,
    guarded: bool = True,
) -> RaceOutcome:
    """Fire `requests` identical creates at each path at once; count what each left behind."""
    schema = f"koda_race_{uuid.uuid4().hex[:10]}"
    connections: list[psycopg2.extensions.connection] = []
    try:
        # Opened inside the try, so a failure halfway still closes the ones already open.
        connections.extend(_connect(database_url) for _ in range(requests))
        _create_tables(connections[0], schema)
        delay = delay_ms / 1000
        naive_outcome = (
            _race(connections, f"{schema}.naive_runs", NAIVE, _check_then_insert, delay)
            if naive
            else None
        )
        guarded_outcome = (
            _race(connections, f"{schema}.guarded_runs", GUARDED, _insert_on_conflict, delay)
            if guarded
            else None
        )
        return RaceOutcome(requests, delay_ms, naive_outcome, guarded_outcome)
    finally:
        if connections:
            with connections[0].cursor() as cursor:
                cursor.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        for connection in connections:
            connection.close()


def _connect(database_url: str) -> psycopg2.extensions.connection:
    connection = psycopg2.connect(database_url, connect_timeout=10)
    connection.autocommit = True  # one short transaction per statement, as in the stores
    return connection


def _create_tables(connection: psycopg2.extensions.connection, schema: str) -> None:
    columns = "id text PRIMARY KEY, idempotency_key text NOT NULL, input text NOT NULL"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE SCHEMA {schema}")
        # For demonstration only: the key is NOT unique here, so nothing stops a duplicate.
        cursor.execute(f"CREATE TABLE {schema}.naive_runs ({columns})")
        cursor.execute(f"CREATE TABLE {schema}.guarded_runs ({columns}, UNIQUE (idempotency_key))")


def _holder(cursor: psycopg2.extensions.cursor, table: str, key: str) -> str | None:
    """The id of the run holding key, if one does: the check both paths make first."""
    cursor.execute(f"SELECT id FROM {table} WHERE idempotency_key = %s", (key,))
    found = cursor.fetchone()
    return str(found[0]) if found else None


def _check_then_insert(
    cursor: psycopg2.extensions.cursor, table: str, key: str, delay: float
) -> str:
    """The anti-pattern: between the SELECT and the INSERT, anyone may insert too."""
    existing = _holder(cursor, table, key)
    if existing is not None:
        return existing
    time.sleep(delay)  # the window, held open on purpose
    run_id = str(ULID())
    cursor.execute(
        f"INSERT INTO {table} (id, idempotency_key, input) VALUES (%s, %s, %s)",
        (run_id, key, "hello"),
    )
    return run_id


def _insert_on_conflict(
    cursor: psycopg2.extensions.cursor, table: str, key: str, delay: float
) -> str:
    """The same check and the same window, but the constraint is the final arbiter."""
    existing = _holder(cursor, table, key)
    if existing is not None:
        return existing
    time.sleep(delay)
    cursor.execute(
        f"INSERT INTO {table} (id, idempotency_key, input) VALUES (%s, %s, %s) "
        "ON CONFLICT (idempotency_key) DO NOTHING RETURNING id",
        (str(ULID()), key, "hello"),
    )
    inserted = cursor.fetchone()
    if inserted:
        return str(inserted[0])
    # Zero rows: somebody else won; answer with their run.
    winner = _holder(cursor, table, key)
    assert winner is not None, "the conflicting row must exist once the insert saw it"
    return winner


def _race(
    connections: list[psycopg2.extensions.connection],
    table: str,
    path: str,
    create: CreateRun,
    delay: float,
) -> PathOutcome:
    key = uuid.uuid4().hex
    start = threading.Barrier(len(connections))

    def one_client(connection: psycopg2.extensions.connection) -> str:
        with connection.cursor() as cursor:
            start.wait()  # everyone leaves the line together
            return create(cursor, table, key, delay)

    with ThreadPoolExecutor(len(connections)) as pool:
        run_ids = list(pool.map(one_client, connections))
    with connections[0].cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table} WHERE idempotency_key = %s", (key,))
        row = cursor.fetchone()
    rows = int(row[0]) if row else 0
    return PathOutcome(path, len(connections), rows, len(set(run_ids)))
