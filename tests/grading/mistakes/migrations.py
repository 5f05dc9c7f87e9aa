"""Learners' migrations: the reference one, and the ways a learner's differs from it.

Each variant is the reference migration (migrations/versions/solution/) with
one change, the way autogenerate or a hand edit would leave it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from labs.trees.finding import REPO_ROOT

REFERENCE = next((REPO_ROOT / "migrations" / "versions" / "solution").glob("0001_*.py"))
RUNS_KEY = 'sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),'
MESSAGES_KEY = 'sa.UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),'
RUNS_INDEX = 'op.create_index("runs_session_id_idx", "runs", ["session_id"], unique=False)'
MESSAGES_INDEX = (
    'op.create_index("messages_session_id_idx", "messages", ["session_id"], unique=False)'
)


def reference() -> str:
    """The solution's migration, as shipped."""
    return REFERENCE.read_text(encoding="utf-8")


def replaced(*pairs: tuple[str, str]) -> Callable[[], str]:
    """The reference with each (old, new) replaced, every old found exactly once."""

    def build() -> str:
        text = reference()
        for old, new in pairs:
            assert text.count(old) == 1, f"{old!r} is not in the reference migration once"
            text = text.replace(old, new)
        return text

    return build


def after_messages(statement: str) -> tuple[str, str]:
    """An extra statement at the end of upgrade(), once the messages table exists."""
    return MESSAGES_INDEX, MESSAGES_INDEX + "\n    " + statement


WITHOUT_CONSTRAINTS = replaced((RUNS_KEY, ""), (MESSAGES_KEY, ""))
WITHOUT_MESSAGES_KEY = replaced((MESSAGES_KEY, ""))
PARTIAL_RUNS_INDEX = replaced(
    (RUNS_KEY, ""),
    after_messages(
        'op.create_index("runs_key_live", "runs", ["idempotency_key"], unique=True, '
        "postgresql_where=sa.text(\"status <> 'cancelled'\"))"
    ),
)
PARTIAL_MESSAGES_INDEX = replaced(
    (MESSAGES_KEY, ""),
    after_messages(
        'op.create_index("messages_run_seq", "messages", ["run_id", "seq"], unique=True, '
        'postgresql_where=sa.text("run_id IS NOT NULL"))'
    ),
)
SEQ_ALONE = replaced((MESSAGES_KEY, 'sa.UniqueConstraint("seq", name="messages_seq_key"),'))
SESSION_AND_SEQ = replaced(
    (MESSAGES_KEY, 'sa.UniqueConstraint("session_id", "seq", name="messages_session_seq_key"),')
)
KEY_AND_SESSION = replaced(
    (
        RUNS_KEY,
        'sa.UniqueConstraint("session_id", "idempotency_key", name="runs_session_key_key"),',
    )
)
DEFERRABLE_RUNS_KEY = replaced(
    (
        RUNS_KEY,
        'sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key", '
        "deferrable=True, initially='DEFERRED'),",
    )
)
EXPRESSION_INDEX = replaced(
    (RUNS_KEY, ""),
    after_messages(
        'op.create_index("runs_key_lower", "runs", [sa.text("lower(idempotency_key)")], '
        "unique=True)"
    ),
)
# Correct but different: unique indexes instead of constraints, columns in another order.
UNIQUE_INDEXES = replaced(
    (RUNS_KEY, ""),
    (MESSAGES_KEY, ""),
    after_messages(
        'op.create_index("runs_key_idx", "runs", ["idempotency_key"], unique=True)\n    '
        'op.create_index("messages_run_seq_idx", "messages", ["run_id", "seq"], unique=True)'
    ),
)
OTHER_ORDER = replaced(
    (MESSAGES_KEY, 'sa.UniqueConstraint("seq", "run_id", name="messages_seq_run_id_key"),')
)
ADDED_LATER = replaced(
    (RUNS_KEY, ""),
    (MESSAGES_KEY, ""),
    after_messages(
        'op.create_unique_constraint("runs_key", "runs", ["idempotency_key"])\n    '
        'op.create_unique_constraint("messages_key", "messages", ["run_id", "seq"])'
    ),
)


def place(tree: Path, source: str, folder: Path | None = None) -> Path:
    """Write a migration where Alembic reads the tree's (or into folder); return the file."""
    versions = folder or tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True, exist_ok=True)
    script = versions / "0001_learner.py"
    script.write_text(source, encoding="utf-8")
    return script
