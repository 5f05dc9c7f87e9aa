"""The pooled engine SqlStore runs on, and the short transactions it runs in.

Each operation is one short transaction: an ORM session where table models
are read and written, a bare connection where the ORM would cost more than
the work, or, for the gateway's hot path, one statement that commits itself
(a single round trip). Whatever the driver raises inside any of them leaves
as one of the lab's typed errors (see sql_refusals.py).

A pooled connection can die while it waits in the pool (the server
restarted, or an administrator ended it). Asking the server on every
checkout ("pre-ping") would cost a round trip per request; instead the pool
looks at the connection's socket, which costs none: a dead connection has
something to read (the server's goodbye, or the end of the stream), a live
idle one has nothing. A connection that dies mid-statement is the hot
path's to retry, once.
"""

from __future__ import annotations

import re
import select
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar, cast

import psycopg2
from psycopg2.extensions import cursor as Cursor
from sqlalchemy import Connection, create_engine, event
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection
from sqlmodel import Session

from ..shared.errors import StoreConfigError
from .sql_refusals import Refusal, psycopg2_url, refuse_nothing, translated, where

SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
T = TypeVar("T")


def _refuse_dead_connection(
    dbapi_connection: psycopg2.extensions.connection,
    record: ConnectionPoolEntry,
    proxy: PoolProxiedConnection,
) -> None:
    """On checkout: raise DisconnectionError (the pool then connects anew) if the server left.

    An idle connection's socket has nothing to read; poll() with a zero
    timeout asks the kernel, not the server, so this costs no round trip.
    """
    if dbapi_connection.closed:
        raise DisconnectionError("the connection is closed")
    probe = select.poll()
    probe.register(dbapi_connection.fileno(), select.POLLIN)
    if probe.poll(0):  # readable, hung up or in error: not a connection to use
        raise DisconnectionError("the server closed the connection while it was pooled")


class Database:
    """One tree's view of a Postgres database: its schema, through a connection pool."""

    def __init__(self, url: str, schema: str, pool_size: int) -> None:
        if not SCHEMA_NAME.fullmatch(schema):
            raise StoreConfigError(f"schema {schema!r} is not a plain lower-case Postgres name")
        driver_url = psycopg2_url(url)  # first: it says clearly what is wrong with a URL
        self.schema = schema
        self.address = where(url)
        self.engine = create_engine(
            driver_url,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_timeout=5,
            connect_args={
                # Unqualified table names resolve in the tree's own schema.
                "options": f"-c search_path={schema}",
                "connect_timeout": 3,
                "application_name": f"mini-koda {schema}",
            },
        )
        event.listen(self.engine, "checkout", _refuse_dead_connection)

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    @contextmanager
    def session(self, refuse: Refusal = refuse_nothing) -> Iterator[Session]:
        """One short transaction in an ORM session."""
        try:
            with Session(self.engine, expire_on_commit=False) as session, session.begin():
                yield session
        except (SQLAlchemyError, ValueError) as error:  # psycopg2 raises ValueError for NUL
            raise translated(error, refuse, self.schema, self.address) from None

    @contextmanager
    def connection(self, refuse: Refusal = refuse_nothing) -> Iterator[Connection]:
        """One short transaction on a bare pooled connection, without the ORM session."""
        try:
            with self.engine.begin() as connection:
                yield connection
        except (SQLAlchemyError, ValueError) as error:
            raise translated(error, refuse, self.schema, self.address) from None

    def autocommit(self, work: Callable[[Cursor, dict[str, object]], T], refuse: Refusal) -> T:
        """Run work on a pooled connection in autocommit mode: each statement commits itself.

        One statement is then one round trip: no BEGIN before it, no COMMIT
        after. work gets a cursor and the connection's info dict (to remember
        what was prepared on it). If the connection turns out dead, work runs
        once more on a fresh one, so it must be safe to repeat.
        """
        for attempt in (1, 2):
            try:
                pooled = self.engine.raw_connection()
            except (SQLAlchemyError, psycopg2.Error) as error:  # the pool raises the driver's own
                raise translated(error, refuse, self.schema, self.address) from None
            driver = cast(psycopg2.extensions.connection, pooled.dbapi_connection)
            try:
                driver.autocommit = True  # a local switch: psycopg2 sends nothing for it
                with driver.cursor() as cursor:
                    return work(cursor, pooled.info)
            except (psycopg2.Error, ValueError) as error:
                if not driver.closed:
                    raise translated(error, refuse, self.schema, self.address) from None
                pooled.invalidate(error)  # dropped: never hand this connection out again
                if attempt == 2:
                    raise translated(error, refuse, self.schema, self.address) from None
            finally:
                if not driver.closed:
                    driver.autocommit = False  # the pool's other users expect transactions
                pooled.close()
        raise AssertionError("unreachable")
