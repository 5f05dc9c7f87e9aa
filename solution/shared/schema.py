"""The three tables, declared once for Alembic to derive the migration from: the session (the
container), the run (one execution, with a lifecycle), the message (a fact, in seq order)."""

from datetime import UTC, datetime

from sqlalchemy import DateTime, Index, Text, UniqueConstraint, text
from sqlmodel import Field, SQLModel
from ulid import ULID

from .states import RunStatus


def new_id() -> str:
    """A new id, made before the write so the gateway can answer at once (a ULID: time-ordered)."""
    return str(ULID())


def utc_now() -> datetime:
    """Return the current time, timezone-aware, as Postgres's timestamptz keeps it."""
    return datetime.now(UTC)


# Timestamps are timestamptz, filled in by the application and defaulted by Postgres.
TIMESTAMPTZ = DateTime(timezone=True)
NOW = {"server_default": text("now()")}


class ChatSession(SQLModel, table=True):
    """One conversation: the container runs and messages hang from."""

    __tablename__ = "sessions"
    __table_args__ = (Index("sessions_user_id_idx", "user_id"),)

    id: str = Field(default_factory=new_id, primary_key=True, sa_type=Text)
    user_id: str = Field(sa_type=Text)
    title: str = Field(sa_type=Text)
    created_at: datetime = Field(default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=NOW)
    updated_at: datetime = Field(default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=NOW)


class Run(SQLModel, table=True):
    """One execution: the user said something and the system runs a round."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("runs_session_id_idx", "session_id"),
        # SOLUTION(check 3): declare idempotency_key unique (a named UniqueConstraint).
        UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),
        # END(check 3)
    )

    id: str = Field(default_factory=new_id, primary_key=True, sa_type=Text)
    session_id: str = Field(foreign_key="sessions.id", sa_type=Text)
    status: RunStatus = Field(default=RunStatus.PENDING, sa_type=Text)
    idempotency_key: str = Field(sa_type=Text)
    input: str = Field(sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)
    prompt_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    completion_tokens: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: datetime = Field(default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=NOW)
    updated_at: datetime = Field(default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=NOW)


class Message(SQLModel, table=True):
    """One immutable fact of a conversation, at position seq within its run."""

    __tablename__ = "messages"
    __table_args__ = (
        Index("messages_session_id_idx", "session_id"),
        # SOLUTION(check 5): declare (run_id, seq) unique (a named UniqueConstraint).
        UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),
        # END(check 5)
    )

    id: str = Field(default_factory=new_id, primary_key=True, sa_type=Text)
    session_id: str = Field(foreign_key="sessions.id", sa_type=Text)
    run_id: str | None = Field(default=None, foreign_key="runs.id", sa_type=Text)
    role: str = Field(sa_type=Text)
    content: str = Field(sa_type=Text)
    seq: int
    created_at: datetime = Field(default_factory=utc_now, sa_type=TIMESTAMPTZ, sa_column_kwargs=NOW)
