"""The pooled engine SqlStore runs on, and the short transactions it runs in.

Each operation is one short transaction: an ORM session where table models
are read and written, or a bare connection where the ORM would cost more
than the work (the gateway's hot path). Whatever the driver raises inside
either leaves as one of the lab's typed errors (see sql_refusals.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, create_engine
from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import Session

from ..shared.errors import StoreConfigError
from .sql_refusals import Refusal, psycopg2_url, refuse_nothing, translated, where

SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


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
            pool_pre_ping=True,  # a connection that outlived a database restart is replaced
            connect_args={
                # Unqualified table names resolve in the tree's own schema.
                "options": f"-c search_path={schema}",
                "connect_timeout": 3,
                "application_name": f"mini-koda {schema}",
            },
        )

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
