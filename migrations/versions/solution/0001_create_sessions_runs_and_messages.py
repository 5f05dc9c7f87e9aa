"""Create sessions, runs and messages, with both unique constraints.

Generated with `alembic -x tree=solution revision --autogenerate`, then read
and tidied. The tables land in the schema env.py puts first on the
search_path (the tree's own), so nothing here names a schema.

Revision ID: 212d00d01876
Revises:
Create Date: 2026-11-30 07:00:14
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "212d00d01876"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create the three tables and their indexes."""
    op.create_table(
        "sessions",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("user_id", sa.Text(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("sessions_user_id_idx", "sessions", ["user_id"], unique=False)

    op.create_table(
        "runs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("status", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.Text(), nullable=False),
        sa.Column("input", sa.Text(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("completion_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
        # Check 3: the arbiter of INSERT ... ON CONFLICT (idempotency_key).
        sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),
    )
    op.create_index("runs_session_id_idx", "runs", ["session_id"], unique=False)

    op.create_table(
        "messages",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("role", sa.Text(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True),
                  server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
        sa.ForeignKeyConstraint(["session_id"], ["sessions.id"]),
        sa.PrimaryKeyConstraint("id"),
        # Check 5: one message per position within a run.
        sa.UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),
    )
    op.create_index("messages_session_id_idx", "messages", ["session_id"], unique=False)


def downgrade() -> None:
    """Drop the tables, children first."""
    op.drop_index("messages_session_id_idx", table_name="messages")
    op.drop_table("messages")
    op.drop_index("runs_session_id_idx", table_name="runs")
    op.drop_table("runs")
    op.drop_index("sessions_user_id_idx", table_name="sessions")
    op.drop_table("sessions")
