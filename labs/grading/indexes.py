"""What Postgres enforces after a migration ran: the indexes of runs and messages, judged.

Each required uniqueness must be a unique constraint or unique index on
exactly its columns, without a WHERE clause, without expressions, and not
deferrable: the arbiters INSERT ... ON CONFLICT can use.
"""

from __future__ import annotations

from dataclasses import dataclass

from labs.lesson.uniqueness import UNIQUENESSES

from .criteria import Outcome
from .rules import lacks

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

    from labs.pg.plain import PINNED

    connection = psycopg2.connect(database_url, connect_timeout=5, options=PINNED)
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
    problems, missing = [], []
    for need in UNIQUENESSES:
        own = [index for index in indexes if index.table == need.table]
        if any(index.why_not(need.columns) is None for index in own):
            continue
        near = [
            f"{index.name} is {index.why_not(need.columns)}"
            for index in own
            if index.unique and "_pkey" not in index.name
        ]
        problems.append(need.label + (f" ({'; '.join(near)})" if near else ""))
        missing.append(lacks(need))
    if not problems:
        return Outcome("pass")
    shown = "\n".join(index.definition for index in indexes)
    return Outcome(
        "fail",
        "after the migration ran, Postgres enforces no uniqueness on " + " nor on ".join(problems),
        shown[:500],
        rules=tuple(missing),
    )
