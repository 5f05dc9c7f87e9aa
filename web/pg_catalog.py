"""What Postgres itself says about the lab's tables: constraints, indexes, migration head.

Read from pg_catalog, not from the models, so the view shows what the
learner's migration really created.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection, make_url

TABLES = ("sessions", "runs", "messages")
CONSTRAINT_KINDS = {"p": "primary key", "u": "unique", "f": "foreign key", "c": "check",
                    "x": "exclusion"}

CONSTRAINTS = text("""
    SELECT c.relname AS table_name, con.conname AS name, con.contype AS kind,
           pg_get_constraintdef(con.oid) AS definition
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = :schema AND c.relname = ANY(:tables)
    ORDER BY c.relname, con.contype, con.conname
""")
INDEXES = text("""
    SELECT tablename AS table_name, indexname AS name, indexdef AS definition
    FROM pg_indexes WHERE schemaname = :schema AND tablename = ANY(:tables)
    ORDER BY tablename, indexname
""")


@dataclass
class SchemaReport:
    """One tree's Postgres schema as the catalog reports it."""

    schema: str
    exists: bool = False
    tables: list[str] = field(default_factory=list)
    constraints: list[tuple[str, str, str, str]] = field(default_factory=list)
    indexes: list[tuple[str, str, str]] = field(default_factory=list)
    head: str = ""  # alembic_version.version_num, empty when never migrated

    def unique(self, table: str) -> list[str]:
        """The unique constraints of one table, by name: what checks 3 and 5 rely on."""
        return [name for t, name, kind, _ in self.constraints if t == table and kind == "unique"]


def describe(database_url: str, schemas: list[str]) -> list[SchemaReport]:
    """Ask Postgres about each schema; raises if the database cannot be reached."""
    url = make_url(database_url)
    if url.drivername in ("postgres", "postgresql"):
        # The lab installs psycopg2; a bare postgresql:// URL must not pick another driver.
        url = url.set(drivername="postgresql+psycopg2")
    engine = create_engine(url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as connection:
            return [_describe_schema(connection, schema) for schema in schemas]
    finally:
        engine.dispose()


def _describe_schema(connection: Connection, schema: str) -> SchemaReport:
    report = SchemaReport(schema)
    report.exists = bool(connection.execute(
        text("SELECT 1 FROM pg_namespace WHERE nspname = :schema"), {"schema": schema}).first())
    if not report.exists:
        return report
    args = {"schema": schema, "tables": list(TABLES)}
    report.tables = list(connection.execute(text(
        "SELECT tablename FROM pg_tables WHERE schemaname = :schema AND tablename = ANY(:tables)"
        " ORDER BY tablename"), args).scalars())
    report.constraints = [(r.table_name, r.name, CONSTRAINT_KINDS.get(r.kind, r.kind),
                           r.definition) for r in connection.execute(CONSTRAINTS, args)]
    report.indexes = [(r.table_name, r.name, r.definition)
                      for r in connection.execute(INDEXES, args)]
    version_table = connection.execute(text("SELECT to_regclass(:name)"),
                                       {"name": f'"{schema}".alembic_version'}).scalar()
    if version_table is not None:
        heads = connection.execute(text(f'SELECT version_num FROM "{schema}".alembic_version'))
        report.head = ", ".join(heads.scalars())
    return report
