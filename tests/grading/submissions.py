"""Building learners' submissions for the grading tests: fixed, half-fixed and broken ones."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from labs.regions import apply_solution, copy_tree
from labs.trees import tree_root

# A learner's migration as autogenerate writes it, cut down to the two constraints.
MIGRATION = '''"""learner's tables"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.Text(), nullable=False),
        sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),
    )


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_table("runs")
'''


def starter_copy(folder: Path) -> Path:
    """A submission folder holding an untouched copy of the starter tree."""
    folder.mkdir(parents=True)
    return copy_tree(tree_root("starter"), folder / "starter")


def with_migration(tree: Path) -> None:
    """Give a submission the migration a learner generates, beside its tree."""
    versions = tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True)
    (versions / "0001_learner_tables.py").write_text(MIGRATION, encoding="utf-8")


def fixed(folder: Path, checks: set[int] | None = None) -> Path:
    """A starter copy with the solution's regions applied (all, or those serving checks)."""
    tree = starter_copy(folder)
    apply_solution(tree, tree_root("solution"), checks)
    return folder


def replace_in(path: Path, pattern: str, replacement: str) -> None:
    """Edit one file of a submission the way a learner might have."""
    text = path.read_text(encoding="utf-8")
    changed = re.sub(pattern, replacement, text, count=1, flags=re.S)
    assert changed != text, f"{pattern!r} not found in {path}"
    path.write_text(changed, encoding="utf-8")


def with_syntax_error(folder: Path) -> Path:
    """A starter copy whose keys.py no longer parses."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "keys.py", r"def idempotency_key_for\(", "def idempotency_key_for(("
    )
    return folder


def with_endless_import(folder: Path) -> Path:
    """A starter copy that loops forever while importing the state machine."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "states.py", r"(# TODO\(check 4\).*?\n)", r"\1while True:\n    pass\n"
    )
    return folder


def with_endless_transition(folder: Path) -> Path:
    """A starter copy that loops forever only when asked about a transition (check 4)."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "states.py",
        r'(    """Say whether the allowlist.*?"""\n)',
        r"\1    while True:\n        pass\n",
    )
    return folder


def with_deleted_file(folder: Path) -> Path:
    """A starter copy missing shared/keys.py."""
    tree = starter_copy(folder)
    (tree / "shared" / "keys.py").unlink()
    return folder


def zipped(folder: Path, archive: Path) -> Path:
    """The submission folder as a zip, the way a learning platform hands it in."""
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            out.write(path, path.relative_to(folder))
    return archive


def not_a_zip(archive: Path) -> Path:
    """A file named .zip that is not one (an upload cut short)."""
    archive.write_bytes(b"PK\x03\x04 this upload was cut short")
    return archive
