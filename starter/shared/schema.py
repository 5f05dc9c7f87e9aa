"""The three tables, declared once; Alembic derives the migration from them.

sessions is the long-lived container, runs is one execution with a
lifecycle, messages are the immutable facts a run produced, ordered by seq.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, Index, Text, UniqueConstraint, text
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

from .states import RunStatus


def utc_now() -> datetime:
    """Return the current time, timezone-aware, as Postgres's timestamptz keeps it."""
    return datetime.now(UTC)


class TableModel(SQLModel, registry=registry()):
    """Base of this tree's tables, with a metadata of its own.

    Both trees declare tables with the same names; separate registries let the
    checks and the dashboard import the starter and the solution side by side.
    Every table's key is text made by the application (see ids.py), so the
    gateway knows a run's id before the row is written.
    """

    id: str = Field(primary_key=True, sa_type=Text)


# Timestamps are timestamptz, filled in by the application and defaulted by Postgres.
TIMESTAMPTZ = DateTime(timezone=True)
DEFAULT_NOW = {"server_default": text("now()")}


class ChatSession(TableModel, table=True):
    """One conversation: the container runs and messages hang from."""

    __tablename__ = "sessions"
    __table_args__ = (Index("sessions_user_id_idx", "user_id"),)

    user_id: str = Field(sa_type=Text)
    title: str = Field(sa_type=Text)
    created_at: datetime = Field(
        default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=DEFAULT_NOW
    )
    updated_at: datetime = Field(
        default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=DEFAULT_NOW
    )


class Run(TableModel, table=True):
    """One execution: the user said something and the system runs a round."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("runs_session_id_idx", "session_id"),
        # TODO(check 3): declare idempotency_key unique (a named UniqueConstraint).
        # END(check 3)
    )

    session_id: str = Field(foreign_key="sessions.id", sa_type=Text)
    status: RunStatus = Field(sa_type=Text)
    idempotency_key: str = Field(sa_type=Text)
    input: str = Field(sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    prompt_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    completion_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(
        default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=DEFAULT_NOW
    )
    updated_at: datetime = Field(
        default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=DEFAULT_NOW
    )


class Message(TableModel, table=True):
    """One immutable fact of a conversation, at position seq within its run."""

    __tablename__ = "messages"
    __table_args__ = (
        Index("messages_session_id_idx", "session_id"),
        # TODO(check 5): declare (run_id, seq) unique (a named UniqueConstraint).
        # END(check 5)
    )

    session_id: str = Field(foreign_key="sessions.id", sa_type=Text)
    run_id: str | None = Field(default=None, foreign_key="runs.id", sa_type=Text)
    role: str = Field(sa_type=Text)
    content: str = Field(sa_type=Text)
    seq: int
    created_at: datetime = Field(
        default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=DEFAULT_NOW
    )
