"""Whether the lesson's tables are plain tables, read from pg_catalog alone.

A migration is the learner's code, and Postgres runs some of what it makes
with the rights of whoever reads: a view over a function, a rule, a row
security policy, an index predicate that calls a function the planner
folds. Before the grader reads a row it makes sure there is none of that:
`sessions`, `runs` and `messages` are ordinary tables (no rules, triggers,
policies or row security, no inheritance), their columns have the lesson's
types or Postgres's own, and the schema holds no function, procedure,
operator, type (an enum is data) or view. For a submission's role the same
goes for everything it owns anywhere in the database, and for every schema
it owns.

Only catalog tables are read, every name qualified, on a connection whose
search_path is pg_catalog and pg_temp (PINNED): nothing here resolves a name
a learner made.
"""

from __future__ import annotations

from typing import Any

from labs.term.i18n import N_, _

from .errors import NotPlainTablesError

TEXT = ("text", "varchar", "bpchar")
INTEGER = ("int2", "int4", "int8")
TIMESTAMP = ("timestamptz", "timestamp")
# The lesson's columns (design: sessions / runs / messages) and the types each may have.
LESSON_COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "sessions": {
        "id": TEXT,
        "user_id": TEXT,
        "title": TEXT,
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    "runs": {
        "id": TEXT,
        "session_id": TEXT,
        "status": TEXT,
        "idempotency_key": TEXT,
        "input": TEXT,
        "error": TEXT,
        "prompt_tokens": INTEGER,
        "completion_tokens": INTEGER,
        "created_at": TIMESTAMP,
        "updated_at": TIMESTAMP,
    },
    "messages": {
        "id": TEXT,
        "session_id": TEXT,
        "run_id": TEXT,
        "role": TEXT,
        "content": TEXT,
        "seq": INTEGER,
        "created_at": TIMESTAMP,
    },
}
TABLES = tuple(LESSON_COLUMNS)
# libpq options for every connection of the grader's: no name a learner made is ever looked up.
PINNED = "-c search_path=pg_catalog,pg_temp"
KINDS = {
    "v": N_("a view"),
    "m": N_("a materialized view"),
    "p": N_("a partitioned table"),
    "f": N_("a foreign table"),
    "S": N_("a sequence"),
    "c": N_("a composite type"),
    "i": N_("an index"),
}
# What else a table may come with, and what _OBJECTS finds, in words to translate.
WORDS = (
    N_("row security"),
    N_("a rule"),
    N_("a trigger"),
    N_("an inheritance"),
    N_("a function"),
    N_("an operator"),
    N_("a type"),
    N_("a view"),
    N_("a materialized view"),
    N_("a foreign table"),
    N_("an extension"),
    N_("something else"),
)

# Each lesson table by name, whatever it is, with what would make reading it run code.
_TABLES = """
SELECT t.name, c.relkind::text, c.relrowsecurity OR c.relforcerowsecurity,
       EXISTS (SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = c.oid),
       EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r WHERE r.ev_class = c.oid
               AND c.relkind = 'r'),
       EXISTS (SELECT 1 FROM pg_catalog.pg_trigger g WHERE g.tgrelid = c.oid
               AND NOT g.tgisinternal),
       EXISTS (SELECT 1 FROM pg_catalog.pg_inherits h
               WHERE h.inhrelid = c.oid OR h.inhparent = c.oid)
FROM pg_catalog.unnest(%(tables)s::text[]) AS t(name)
LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = %(schema)s
LEFT JOIN pg_catalog.pg_class c ON c.relname = t.name AND c.relnamespace = n.oid
"""
# The columns of the lesson tables, with their type's name, schema and kind.
_COLUMNS = """
SELECT c.relname::text, a.attname::text, ty.typname::text, tn.nspname::text, ty.typtype::text
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid AND c.relkind = 'r'
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace AND n.nspname = %(schema)s
JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
JOIN pg_catalog.pg_namespace tn ON tn.oid = ty.typnamespace
WHERE c.relname = ANY(%(tables)s::text[]) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum
"""
# Code and views in the schema, and (for a submission's role) anywhere it owns or could own.
_OBJECTS = """
WITH owner AS (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = %(owner)s),
spaces AS (
    SELECT oid FROM pg_catalog.pg_namespace
    WHERE nspname = %(schema)s OR nspowner IN (SELECT oid FROM owner)
)
SELECT 'a function', n.nspname || '.' || p.proname || '()'
FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE p.pronamespace IN (SELECT oid FROM spaces) OR p.proowner IN (SELECT oid FROM owner)
UNION ALL
SELECT 'an operator', n.nspname || '.' || o.oprname
FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
WHERE o.oprnamespace IN (SELECT oid FROM spaces) OR o.oprowner IN (SELECT oid FROM owner)
UNION ALL
SELECT 'a type', n.nspname || '.' || t.typname
FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
LEFT JOIN pg_catalog.pg_class r ON r.oid = t.typrelid
LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem AND t.typcategory = 'A'
LEFT JOIN pg_catalog.pg_class er ON er.oid = e.typrelid
WHERE (t.typnamespace IN (SELECT oid FROM spaces) OR t.typowner IN (SELECT oid FROM owner))
  -- an enum is data; a table's own row type (and its array) comes with the table
  AND t.typtype <> 'e' AND NOT (e.oid IS NOT NULL AND e.typtype = 'e')
  AND NOT (r.oid IS NOT NULL AND r.relkind <> 'c')
  AND NOT (er.oid IS NOT NULL AND er.relkind <> 'c')
UNION ALL
SELECT CASE c.relkind WHEN 'v' THEN 'a view' WHEN 'm' THEN 'a materialized view'
       ELSE 'a foreign table' END, n.nspname || '.' || c.relname
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('v', 'm', 'f')
  AND (c.relnamespace IN (SELECT oid FROM spaces) OR c.relowner IN (SELECT oid FROM owner))
UNION ALL
SELECT 'an extension', x.extname
FROM pg_catalog.pg_extension x
WHERE x.extnamespace IN (SELECT oid FROM spaces) OR x.extowner IN (SELECT oid FROM owner)
ORDER BY 1, 2
"""


def table_problems(cursor: Any, schema: str, owner: str | None = None) -> list[str]:
    """What stands between the lesson's tables and plain tables; empty when nothing does.

    A table that is missing, or a lesson column that is missing, is not a
    problem here: the checks fail on it as a learner's mistake. owner is the
    submission's role, when the schema is one (its objects anywhere count).
    """
    arguments = {"schema": schema, "tables": list(TABLES), "owner": owner or ""}
    problems: list[str] = []
    cursor.execute(_TABLES, arguments)
    for name, kind, secured, policy, rule, trigger, inherits in cursor.fetchall():
        if kind is None:
            continue
        if kind != "r":
            problems.append(
                _("{kind} where the lesson has the table {table}").format(
                    kind=_(KINDS.get(kind, "something else")), table=name
                )
            )
            continue
        problems += [
            _("{what} on {table}").format(what=_(what), table=name)
            for what, found in (
                ("row security", secured or policy),
                ("a rule", rule),
                ("a trigger", trigger),
                ("an inheritance", inherits),
            )
            if found
        ]
    cursor.execute(_COLUMNS, arguments)
    for table, column, type_name, type_schema, type_kind in cursor.fetchall():
        wanted = LESSON_COLUMNS[table].get(column)
        builtin = type_schema == "pg_catalog" or type_kind == "e"
        fits = wanted is None or type_name in wanted or (column == "status" and type_kind == "e")
        if builtin and fits:
            continue
        named = {"table": table, "column": column, "type": type_name}
        if wanted:
            problems.append(
                _("a column {table}.{column} of type {type} where the lesson has {lesson}").format(
                    **named, lesson=wanted[0]
                )
            )
        else:
            problems.append(_("a column {table}.{column} of type {type}").format(**named))
    cursor.execute(_OBJECTS, arguments)
    problems += [
        _("{what} {name}").format(what=_(what), name=name) for what, name in cursor.fetchall()
    ]
    return problems


def ensure_plain_tables(cursor: Any, schema: str, owner: str | None = None) -> None:
    """Raise NotPlainTablesError naming what table_problems finds, if anything."""
    problems = table_problems(cursor, schema, owner)
    if problems:
        raise NotPlainTablesError(problems)
