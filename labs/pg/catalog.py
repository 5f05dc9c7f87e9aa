"""What Postgres itself says about a tree's tables: constraints, indexes, migration.

The models declare the constraints; only the database's own catalog proves
a migration put them there. The `constraints` command and the dashboard's
Database view read it through the functions here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from labs.lesson.uniqueness import UNIQUENESSES
from labs.trees.finding import REPO_ROOT

from .errors import CatalogError as CatalogError  # where the commands import it from

TABLES = ("sessions", "runs", "messages")
SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@dataclass(frozen=True)
class CatalogEntry:
    """One unique constraint or index of a lab table, as pg_catalog reports it."""

    table: str
    name: str
    kind: str  # primary key, unique constraint, unique index, index
    columns: tuple[str, ...]
    definition: str
    unique: bool


@dataclass(frozen=True)
class Requirement:
    """A uniqueness the lab needs, and the constraint or index that provides it, if any."""

    table: str
    columns: tuple[str, ...]
    check: int
    met_by: str | None

    @property
    def present(self) -> bool:
        """True when Postgres enforces this uniqueness."""
        return self.met_by is not None

    def __str__(self) -> str:
        return f"{self.table} ({', '.join(self.columns)})"


_INDEXES = text("""
SELECT c.relname AS table_name, i.relname AS index_name, x.indisunique AS is_unique,
       x.indpred IS NOT NULL AS is_partial,
       ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(num, pos)
             JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.num
             ORDER BY k.pos) AS columns,
       pg_get_indexdef(x.indexrelid) AS index_def,
       con.conname AS constraint_name, con.contype AS constraint_type,
       pg_get_constraintdef(con.oid) AS constraint_def
FROM pg_index x
JOIN pg_class c ON c.oid = x.indrelid
JOIN pg_class i ON i.oid = x.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_constraint con ON con.conindid = x.indexrelid AND con.conrelid = x.indrelid
WHERE n.nspname = :schema AND c.relname = ANY(:tables)
ORDER BY array_position(:tables, c.relname::text),
         CASE con.contype WHEN 'p' THEN 0 WHEN 'u' THEN 1 ELSE 2 END, NOT x.indisunique, i.relname
""")


def psycopg2_url(url: str) -> str:
    """Return a postgresql:// URL that SQLAlchemy opens with psycopg2, or raise ValueError."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ValueError(
            f"{url!r} is not a database URL, e.g. postgresql://koda:koda@localhost:5508/koda"
        ) from None
    if parsed.drivername.partition("+")[0] not in ("postgresql", "postgres"):
        raise ValueError(f"{parsed.drivername!r} is not Postgres: use a postgresql:// URL")
    return parsed.set(drivername="postgresql+psycopg2").render_as_string(hide_password=False)


def _engine(database_url: str) -> Engine:
    try:
        return create_engine(
            psycopg2_url(database_url), poolclass=NullPool, connect_args={"connect_timeout": 5}
        )
    except ValueError as error:
        raise CatalogError(str(error)) from None


def constraints_report(database_url: str, schema: str) -> list[CatalogEntry]:
    """The primary keys, unique constraints and indexes of the schema's lab tables.

    An empty list means the schema has none of the tables (not migrated yet).
    """
    engine = _engine(database_url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(_INDEXES, {"schema": schema, "tables": list(TABLES)})
            entries = []
            for row in rows.mappings():
                constraint = {"p": "primary key", "u": "unique constraint"}.get(
                    row["constraint_type"] or ""
                )
                plain = "unique index" if row["is_unique"] else "index"
                entries.append(
                    CatalogEntry(
                        table=row["table_name"],
                        name=row["constraint_name"] if constraint else row["index_name"],
                        kind=constraint or plain + (" (partial)" if row["is_partial"] else ""),
                        columns=tuple(row["columns"]),
                        definition=row["constraint_def"] if constraint else row["index_def"],
                        unique=bool(row["is_unique"]) and not row["is_partial"],
                    )
                )
            return entries
    except SQLAlchemyError as error:
        raise CatalogError(f"cannot read the database: {_first_line(error)}") from None
    finally:
        engine.dispose()


def required_constraints(entries: list[CatalogEntry]) -> list[Requirement]:
    """For each uniqueness the lab needs, the entry that enforces it (or None)."""
    found = []
    for need in UNIQUENESSES:
        met_by = next((e.name for e in entries if e.unique and need.on(e.table, e.columns)), None)
        found.append(Requirement(need.table, need.columns, need.check, met_by))
    return found


def migration_head(database_url: str, schema: str) -> str | None:
    """The revision the schema's alembic_version table records, or None if never migrated."""
    if not SCHEMA_NAME.fullmatch(schema):
        raise CatalogError(f"{schema!r} is not a plain lower-case Postgres schema name")
    engine = _engine(database_url)
    try:
        with engine.connect() as connection:
            table = connection.execute(
                text("SELECT to_regclass(:name)"), {"name": f'"{schema}".alembic_version'}
            ).scalar()
            if table is None:
                return None
            versions = connection.execute(
                text(f'SELECT version_num FROM "{schema}".alembic_version ORDER BY 1')
            ).scalars()
            return ", ".join(versions) or None
    except SQLAlchemyError as error:
        raise CatalogError(f"cannot read the database: {_first_line(error)}") from None
    finally:
        engine.dispose()


def latest_migration(tree: str, versions: Path | None = None) -> str | None:
    """The head revision among the tree's migration files, or None when it has none."""
    from alembic.script import ScriptDirectory

    folder = versions or REPO_ROOT / "migrations" / "versions" / tree
    environment = str(files("labs.pg.environment"))  # the kit's Alembic environment
    script = ScriptDirectory(environment, version_locations=[str(folder)])
    return script.get_current_head()


def _first_line(error: SQLAlchemyError) -> str:
    original = getattr(error, "orig", None) or error
    return str(original).strip().splitlines()[0] if str(original).strip() else repr(error)
