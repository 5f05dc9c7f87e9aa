"""What Postgres and its driver say, in the lab's words.

SqlStore runs each operation inside one try; whatever SQLAlchemy or
psycopg2 raise is turned into a typed error here, so no driver exception
leaves infra/. A refused write (a duplicate seq, a missing session) becomes
the error the operation names, a value Postgres cannot hold becomes
InvalidValueError, and anything else means the store cannot serve.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg2
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from ..shared.errors import (
    DuplicateMessageError,
    InvalidValueError,
    LabError,
    MissingConstraintError,
    RunNotFoundError,
    SessionNotFoundError,
    StoreConfigError,
    StoreUnavailableError,
)
from ..shared.schema import Message

TABLES = ("sessions", "runs", "messages")

# The SQLSTATEs that get an answer of their own.
FOREIGN_KEY_VIOLATION = "23503"
UNIQUE_VIOLATION = "23505"
NO_ARBITER = "42P10"  # ON CONFLICT names columns that no unique constraint covers
MISSING_TABLE = ("42P01", "3F000")  # undefined table, undefined schema
DATA_EXCEPTION = "22"  # the class of "this value does not fit": out of range, bad text

# Maps a refused write's SQLSTATE to the operation's own error, or None for "not mine".
Refusal = Callable[[str | None], LabError | None]


def refuse_nothing(_: str | None) -> LabError | None:
    """The Refusal of operations that expect no refused write."""
    return None


def psycopg2_url(url: str) -> str:
    """Return the URL with psycopg2 as its driver, or raise StoreConfigError saying why."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreConfigError(f"DATABASE_URL is not a database URL: {url!r}") from None
    if parsed.drivername.partition("+")[0] not in ("postgresql", "postgres"):
        raise StoreConfigError(f"DATABASE_URL must be a postgresql:// URL, not {url!r}")
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def where(url: str) -> str:
    """host:port/database of a URL, for messages (never the password)."""
    parsed = make_url(url)
    host = parsed.host or parsed.query.get("host") or "localhost"  # ?host=/dir: a socket
    port = parsed.port or parsed.query.get("port") or 5432
    return f"{host}:{port}/{parsed.database or ''}"


def refuse_run(session_id: str) -> Refusal:
    """A run's foreign key names its session."""

    def refuse(code: str | None) -> LabError | None:
        return SessionNotFoundError(session_id) if code == FOREIGN_KEY_VIOLATION else None

    return refuse


def refuse_message(message: Message, session_exists: Callable[[str], bool]) -> Refusal:
    """A message's unique (run_id, seq) and its two foreign keys, told apart."""

    def refuse(code: str | None) -> LabError | None:
        if code == UNIQUE_VIOLATION and message.run_id is not None:
            return DuplicateMessageError(message.run_id, message.seq)
        if code == FOREIGN_KEY_VIOLATION:
            if message.run_id is None or not session_exists(message.session_id):
                return SessionNotFoundError(message.session_id)
            return RunNotFoundError(message.run_id)
        return None

    return refuse


def translated(error: Exception, refuse: Refusal, schema: str, address: str) -> Exception:
    """The exception SqlStore raises instead of error."""
    if isinstance(error, ValueError):
        return InvalidValueError(f"the database cannot store this value: {error}")
    if isinstance(error, PoolTimeoutError):
        return StoreUnavailableError(
            "every database connection is busy: try again shortly", kind="connections busy"
        )
    # SQLAlchemy wraps the driver's exception; the hot path meets the driver's own.
    driver_error = error.orig if isinstance(error, DBAPIError) else error
    code = getattr(driver_error, "pgcode", None)
    if code == NO_ARBITER:
        return MissingConstraintError("runs.idempotency_key has no unique constraint")
    refusal = refuse(code)
    if refusal is not None:
        return refusal
    if code in MISSING_TABLE:
        return StoreUnavailableError(missing_tables(schema, list(TABLES)), kind="schema missing")
    detail = str(driver_error or error).strip().splitlines()
    reason = detail[0] if detail else type(error).__name__
    if code is not None and code.startswith(DATA_EXCEPTION):
        return InvalidValueError(f"the database cannot store this value: {reason}")
    lost = (OperationalError, psycopg2.OperationalError, psycopg2.InterfaceError)
    if isinstance(error, lost) or getattr(error, "connection_invalidated", False):
        return StoreUnavailableError(
            f"cannot reach the database at {address}: {reason}", kind="database unreachable"
        )
    return StoreUnavailableError(
        f"the database refused the operation: {reason}", kind="database error"
    )


def missing_tables(schema: str, missing: list[str]) -> str:
    """One sentence: whose schema lacks what, and the command that creates it."""
    command = f"alembic -x tree={schema} upgrade head"
    if len(missing) == len(TABLES):
        return (
            f'the {schema} tree has no tables in schema "{schema}" of this database: '
            f"create them with `{command}`"
        )
    return (
        f'the {schema} tree\'s schema "{schema}" has no {" or ".join(missing)} table: '
        f"create the tables with `{command}`"
    )
