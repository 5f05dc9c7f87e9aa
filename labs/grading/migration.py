"""The migration criterion: where a submission's migration lives, and what it must create.

One rule says where a migration may live, for `labs grade` and for
`pytest --lab-tree` alike: the top-level `*.py` files of
`migrations/versions/<tree folder>/` beside the tree, which is where
`alembic -x tree=starter revision --autogenerate` writes it and the only
folder Alembic reads (or the folder an instructor names with
`--lab-migrations`). A script anywhere else is not applied, and the
failure message names it.

With a database, the verdict is what Postgres reports after the
submission's own migration ran in a schema of its own (indexes.py): each
required uniqueness (labs/lesson/uniqueness.py) must be enforced by a
unique constraint or unique index on exactly those columns, without a WHERE
clause, without expressions, and not deferrable (the arbiters INSERT ...
ON CONFLICT can use). A partial unique
index, a unique index on seq alone or a constraint on other columns is not
the uniqueness the lesson asks for. A failure names the migration's line
that made it so (migration_flaws.py): the deferrable constraint, the index on
an expression, or the create_table that lacks what shared/schema.py declares.

Without DATABASE_URL the migration runs in a database of its own on the
grader's own cluster when the PostgreSQL server binaries are installed
(on_postgres_throwaway.py); without those it is not graded, and says so.
Reading the scripts instead of running them would pass a constraint a later
script drops, or one an `op.execute` never made.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from labs.term.i18n import _

from .criteria import Outcome
from .indexes import PgIndex, judge_indexes
from .migration_flaws import migration_flaws

# Where `alembic -x tree=<name> revision` writes a tree's migration, relative to the tree's parent.
VERSIONS = Path("migrations") / "versions"


def migration_folder(tree: Path, migrations: Path | None = None) -> Path:
    """The one folder a submission's migration may live in (it may not exist)."""
    if migrations is not None:
        return migrations.resolve()
    return (tree.parent / VERSIONS / tree.name).resolve()


def migration_files(tree: Path, migrations: Path | None = None) -> list[Path]:
    """The scripts Alembic applies for the tree: the top-level *.py of migration_folder()."""
    folder = migration_folder(tree, migrations)
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def another_trees(path: Path, versions: Path, tree: Path) -> bool:
    """Whether a script is the migration of another tree beside this one (solution/'s, say).

    Such a script is where it belongs, for that tree: telling the learner to
    move it into this tree's folder would hand them another tree's answer.
    """
    if not path.is_relative_to(versions) or path.parent == versions:
        return False
    name = path.relative_to(versions).parts[0]
    return name != tree.name and (tree.parent / name).is_dir()


def stray_migrations(tree: Path) -> list[Path]:
    """Scripts with an upgrade() near the tree but outside the folder Alembic reads
    (another tree's own migration folder aside)."""
    found = []
    versions = (tree.parent / VERSIONS).resolve()
    for base in (tree, tree.parent / "migrations"):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts or path.parent.resolve() == migration_folder(tree):
                continue
            if another_trees(path.resolve(), versions, tree):
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if "def upgrade(" in text and "revision" in text:
                found.append(path)
    return found[:5]


def no_migration_message(tree: Path, migrations: Path | None = None) -> str:
    """Why there is no migration, and where it should be."""
    folder = migration_folder(tree, migrations)
    message = (
        f"no migration found in {folder}: generate one with Alembic's --autogenerate "
        "after declaring the constraints"
    )
    strays = stray_migrations(tree) if migrations is None else []
    if strays:
        message += (
            "; found "
            + ", ".join(str(p) for p in strays)
            + f", which Alembic does not read: move it into {folder}"
        )
    return message


THROWAWAY = "run on the grader's own Postgres cluster (no DATABASE_URL)"


def migration_verdict(
    indexes: list[PgIndex], files: list[Path], tree: Path, database_url: str | None
) -> Outcome:
    """The migration criterion, from the indexes Postgres holds after the tree's migration ran.

    A failure's hints point at the migration's lines that made it so, each on a line of its own.
    """
    outcome = judge_indexes(indexes)
    hints = [str(flaw.hint(flaw.need.check)) for flaw in migration_flaws(indexes, files, tree)]
    if hints:
        told = [_("hint:     {text}").format(text=hint) for hint in hints]
        outcome = replace(outcome, message="\n".join([outcome.message, *told]))
    if database_url:
        return outcome
    return replace(outcome, output=f"{THROWAWAY}\n{outcome.output}".strip())
