"""The migration criterion: where a submission's migration lives, and what it must create.

One rule says where a migration may live, for `labs grade` and for
`pytest --lab-tree` alike: the top-level `*.py` files of
`migrations/versions/<tree folder>/` beside the tree, which is where
`alembic -x tree=starter revision --autogenerate` writes it and the only
folder Alembic reads (or the folder an instructor names with
`--lab-migrations`). A script anywhere else is not applied, and the
failure message names it.

With a database, the verdict is what Postgres reports after the
submission's own migration ran in a schema of its own: each required
uniqueness must be enforced by a unique constraint or unique index on
exactly those columns, without a WHERE clause, without expressions, and not
deferrable (the arbiters INSERT ... ON CONFLICT can use). A partial unique
index, a unique index on seq alone or a constraint on other columns is not
the uniqueness the lesson asks for.

Without a database the scripts are read, never imported (they are the
learner's code), with the same rule for columns and WHERE clauses, and the
outcome says it was read, not run.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from .criteria import Outcome

# Where `alembic -x tree=<name> revision` writes a tree's migration, relative to the tree's parent.
VERSIONS = Path("migrations") / "versions"

REQUIRED = {
    ("runs", ("idempotency_key",)): "runs.idempotency_key",
    ("messages", ("run_id", "seq")): "messages (run_id, seq)",
}


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _strings(nodes: list[ast.expr]) -> list[str]:
    values = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            values.append(node.value)
        elif isinstance(node, ast.List | ast.Tuple):
            values.extend(_strings(list(node.elts)))
    return values


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _arg(call: ast.Call, index: int) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else None


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _partial(call: ast.Call) -> bool:
    """A WHERE clause on an index (postgresql_where=...) makes it partial: not a uniqueness."""
    return any(k.arg and k.arg.endswith("_where") for k in call.keywords)


def migration_folder(tree: Path, migrations: Path | None = None) -> Path:
    """The one folder a submission's migration may live in (it may not exist)."""
    if migrations is not None:
        return migrations.resolve()
    return (tree.parent / VERSIONS / tree.name).resolve()


def migration_files(tree: Path, migrations: Path | None = None) -> list[Path]:
    """The scripts Alembic applies for the tree: the top-level *.py of migration_folder()."""
    folder = migration_folder(tree, migrations)
    return sorted(folder.glob("*.py")) if folder.is_dir() else []


def stray_migrations(tree: Path) -> list[Path]:
    """Scripts with an upgrade() near the tree but outside the folder Alembic reads."""
    found = []
    for base in (tree, tree.parent / "migrations"):
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts or path.parent.resolve() == migration_folder(tree):
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


def constraints_in(source: str) -> set[tuple[str, tuple[str, ...]]]:
    """The (table, columns) unique constraints the upgrade() of one script creates."""
    tree = ast.parse(source)
    upgrades: list[ast.AST] = [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "upgrade"
    ]
    found: set[tuple[str, tuple[str, ...]]] = set()
    for scope in upgrades or [tree]:
        for call in (n for n in ast.walk(scope) if isinstance(n, ast.Call)):
            kind = _name(call.func)
            if kind == "create_table" and call.args:
                table = _strings(call.args[:1])
                for part in (a for a in call.args[1:] if isinstance(a, ast.Call)):
                    if _name(part.func) == "UniqueConstraint":
                        found.add((table[0] if table else "", tuple(_strings(list(part.args)))))
                    unique = _is_true(_keyword(part, "unique"))
                    if _name(part.func) == "Column" and unique and _strings(part.args[:1]):
                        found.add((table[0] if table else "", tuple(_strings(part.args[:1]))))
                    if _name(part.func) == "Index" and unique and not _partial(part):
                        # Index(name, *columns): the first argument names the index.
                        found.add((table[0] if table else "", tuple(_strings(part.args[1:]))))
            elif kind == "create_unique_constraint":
                # (constraint_name, table_name, columns), positionally or by keyword.
                table_node = _keyword(call, "table_name") or _arg(call, 1)
                columns_node = _keyword(call, "columns") or _arg(call, 2)
                if table_node is not None and columns_node is not None:
                    found.add(("".join(_strings([table_node])), tuple(_strings([columns_node]))))
            elif (
                kind == "create_index" and _is_true(_keyword(call, "unique")) and not _partial(call)
            ):
                # (index_name, table_name, columns, unique=True), like create_unique_constraint.
                table_node = _keyword(call, "table_name") or _arg(call, 1)
                columns_node = _keyword(call, "columns") or _arg(call, 2)
                if table_node is not None and columns_node is not None:
                    found.add(("".join(_strings([table_node])), tuple(_strings([columns_node]))))
    return found


def missing_constraints(files: list[Path]) -> list[str]:
    """Which of the two required unique constraints no script creates."""
    found: set[tuple[str, tuple[str, ...]]] = set()
    for path in files:
        try:
            found |= constraints_in(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
    normalised = {(table.rpartition(".")[2], tuple(sorted(columns))) for table, columns in found}
    return [
        label
        for (table, columns), label in REQUIRED.items()
        if (table, tuple(sorted(columns))) not in normalised
    ]


# Every index of the two tables, with what makes one count as the uniqueness or not.
_INDEXES = """
SELECT c.relname, i.relname, x.indisunique, x.indpred IS NOT NULL, x.indimmediate,
       x.indisvalid, x.indnkeyatts,
       ARRAY(SELECT COALESCE(a.attname::text, '')
             FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(num, pos)
             LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.num
             ORDER BY k.pos),
       pg_get_indexdef(x.indexrelid)
FROM pg_index x
JOIN pg_class c ON c.oid = x.indrelid
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relname IN ('runs', 'messages')
ORDER BY c.relname, i.relname
"""


@dataclass(frozen=True)
class PgIndex:
    """One index of runs or messages as pg_catalog reports it."""

    table: str
    name: str
    unique: bool
    partial: bool
    immediate: bool
    valid: bool
    columns: tuple[str, ...]  # key columns; "" for an expression
    definition: str

    def why_not(self, columns: tuple[str, ...]) -> str | None:
        """None when this index enforces uniqueness on exactly `columns`, else why it does not."""
        if not self.unique:
            return "not unique"
        if self.partial:
            return "partial (it has a WHERE clause)"
        if "" in self.columns:
            return "on an expression, not on the columns"
        if set(self.columns) != set(columns):
            return f"on ({', '.join(self.columns)})"
        if not self.immediate:
            return "deferrable, so INSERT ... ON CONFLICT cannot use it"
        if not self.valid:
            return "not valid"
        return None


def read_indexes(database_url: str, schema: str) -> list[PgIndex]:
    """The indexes (constraints' included) of runs and messages in schema, from pg_catalog."""
    import psycopg2

    connection = psycopg2.connect(database_url, connect_timeout=5)
    try:
        with connection.cursor() as cursor:
            cursor.execute(_INDEXES, (schema,))
            return [
                PgIndex(
                    table=table,
                    name=name,
                    unique=unique,
                    partial=partial,
                    immediate=immediate,
                    valid=valid,
                    columns=tuple(columns[:keys]),
                    definition=definition,
                )
                for table, name, unique, partial, immediate, valid, keys, columns, definition in (
                    cursor.fetchall()
                )
            ]
    finally:
        connection.close()


def judge_indexes(indexes: list[PgIndex]) -> Outcome:
    """Pass when Postgres enforces both uniquenesses; otherwise say what it has instead."""
    problems = []
    for (table, columns), label in REQUIRED.items():
        own = [index for index in indexes if index.table == table]
        if any(index.why_not(columns) is None for index in own):
            continue
        near = [
            f"{index.name} is {index.why_not(columns)}"
            for index in own
            if index.unique and "_pkey" not in index.name
        ]
        problems.append(f"{label}" + (f" ({'; '.join(near)})" if near else ""))
    if not problems:
        return Outcome("pass")
    shown = "\n".join(index.definition for index in indexes)
    return Outcome(
        "fail",
        "after the migration ran, Postgres enforces no uniqueness on " + " nor on ".join(problems),
        shown[:500],
    )


def judge_statically(files: list[Path]) -> Outcome:
    """Both unique constraints in the scripts, read, not run (no database to run them on)."""
    missing = missing_constraints(files)
    read = "read, not run (no DATABASE_URL): " + ", ".join(p.name for p in files)
    if missing:
        return Outcome(
            "fail",
            "the migration does not create the unique constraint on " + " nor on ".join(missing),
            read,
        )
    return Outcome("pass", "", read)


def judge_migration(
    tree: Path,
    migrations: Path | None = None,
    database_url: str | None = None,
    timeout: float = 120.0,
) -> Outcome:
    """The migration criterion: on Postgres when there is a database, read otherwise."""
    files = migration_files(tree, migrations)
    if not files:
        return Outcome("fail", no_migration_message(tree, migrations))
    if not database_url:
        return judge_statically(files)
    from .errors import MigrationFailedError
    from .on_postgres import migrated_schema

    try:
        with migrated_schema(database_url, tree, files[0].parent, timeout) as tenant:
            indexes = read_indexes(database_url, tenant.schema)
    except MigrationFailedError as error:
        return Outcome("fail", str(error))
    return judge_indexes(indexes)
