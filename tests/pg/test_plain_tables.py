"""The grader reads only plain tables: what a migration could make instead is found in the catalog.

Each hostile shape is made the way a migration would make it (as the
submission's role, in its schema), then labs/pg/plain.py is asked; the
driver's reader refuses to read when the tables change under it, and counts
every row against what the answers named.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg2
import pytest
from psycopg2 import sql

from labs.checking.database import Database
from labs.checking.errors import CheckFailedError
from labs.grading.on_postgres import as_role
from labs.grading.on_postgres_roles import connect_admin, create_roles, drop_roles, grant_reader
from labs.pg.plain import PINNED, table_problems
from labs.pg.tenants import Names, new_names

LESSON_DDL = """
CREATE TABLE sessions (id text PRIMARY KEY, user_id text NOT NULL, title text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE runs (id text PRIMARY KEY, session_id text NOT NULL REFERENCES sessions (id),
    status text NOT NULL, idempotency_key text NOT NULL UNIQUE, input text NOT NULL, error text,
    prompt_tokens integer NOT NULL DEFAULT 0, completion_tokens integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE messages (id text PRIMARY KEY, session_id text NOT NULL REFERENCES sessions (id),
    run_id text REFERENCES runs (id), role text NOT NULL, content text NOT NULL,
    seq integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (run_id, seq));
CREATE TABLE alembic_version (version_num varchar(32) PRIMARY KEY);
"""
FUNCTION = "CREATE FUNCTION one() RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT 1';"


@pytest.fixture
def tenant(fresh_database: str) -> Iterator[tuple[Names, str, str]]:
    """A submission's roles and schema, as grading makes them: names, its URL, the reader's."""
    names = new_names()
    admin = connect_admin(fresh_database, names.marker)
    with admin.cursor() as cursor:
        tenant_password, reader_password = create_roles(cursor, names)
    tenant_url = as_role(fresh_database, names.tenant, tenant_password)
    try:
        yield names, tenant_url, as_role(fresh_database, names.reader, reader_password)
    finally:
        with admin.cursor() as cursor:
            drop_roles(cursor, names)
        admin.close()


def as_tenant(url: str, statements: str) -> None:
    """Run statements as the submission's role, in its schema, as its migration would."""
    connection = psycopg2.connect(url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(statements)
    connection.close()


def problems(database_url: str, names: Names, owner: bool = True) -> list[str]:
    """What the grader's own, pinned connection finds in the tenant's schema."""
    connection = psycopg2.connect(database_url, options=PINNED)
    with connection.cursor() as cursor:
        found = table_problems(cursor, names.tenant, names.tenant if owner else None)
    connection.close()
    return found


@pytest.mark.parametrize(
    ("hostile", "expected"),
    [
        (
            "ALTER TABLE runs RENAME TO kept; CREATE VIEW runs AS SELECT * FROM kept",
            "a view where the lesson has the table runs",
        ),
        (
            "ALTER TABLE messages RENAME TO kept; CREATE MATERIALIZED VIEW messages AS "
            "SELECT * FROM kept",
            "a materialized view where the lesson has the table messages",
        ),
        ("CREATE RULE quiet AS ON INSERT TO runs DO INSTEAD NOTHING", "a rule on runs"),
        (
            "CREATE FUNCTION t() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';"
            "CREATE TRIGGER t BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION t()",
            "a trigger on runs",
        ),
        ("ALTER TABLE runs ENABLE ROW LEVEL SECURITY", "row security on runs"),
        ("CREATE POLICY everyone ON sessions USING (true)", "row security on sessions"),
        ("CREATE TABLE more_runs () INHERITS (runs)", "an inheritance on runs"),
        (
            "CREATE DOMAIN words AS text; ALTER TABLE runs ALTER COLUMN input TYPE words",
            "a column runs.input of type words where the lesson has text",
        ),
        (
            "ALTER TABLE runs ALTER COLUMN status TYPE integer USING 0",
            "a column runs.status of type int4 where the lesson has text",
        ),
        (FUNCTION + "CREATE INDEX folded ON runs (id) WHERE one() = 1", "a function"),
        ("CREATE VIEW extra AS SELECT 1 AS one", "a view"),
        (
            "CREATE FUNCTION same(text, text) RETURNS bool LANGUAGE sql AS 'SELECT true';"
            "CREATE OPERATOR === (LEFTARG = text, RIGHTARG = text, FUNCTION = same)",
            "an operator",
        ),
        ("CREATE TYPE pair AS (a int, b int)", "a type"),
    ],
    ids=[
        "view-for-runs",
        "materialized-view-for-messages",
        "rule",
        "trigger",
        "row-security",
        "policy",
        "inheritance",
        "domain-column",
        "integer-status",
        "function-in-an-index-predicate",
        "another-view",
        "operator",
        "composite-type",
    ],
)
def test_what_is_not_a_plain_table_is_named(
    fresh_database: str, tenant: tuple[Names, str, str], hostile: str, expected: str
) -> None:
    """Each shape that could run code or hide rows on a read is found and named."""
    names, tenant_url, _reader = tenant
    as_tenant(tenant_url, LESSON_DDL + hostile)
    found = problems(fresh_database, names)
    assert any(expected in problem for problem in found), found


@pytest.mark.parametrize(
    "honest",
    [
        "",
        "CREATE TYPE run_status AS ENUM ('pending', 'running');"
        "ALTER TABLE runs ALTER COLUMN status TYPE run_status USING 'pending'",
        "ALTER TABLE sessions ALTER COLUMN user_id TYPE varchar(200)",
        "CREATE INDEX runs_session_id_idx ON runs (session_id); ALTER TABLE runs ADD note jsonb",
    ],
    ids=["the-lessons-tables", "an-enum-status", "a-varchar-column", "more-indexes-and-columns"],
)
def test_the_lessons_tables_and_harmless_variations_are_plain(
    fresh_database: str, tenant: tuple[Names, str, str], honest: str
) -> None:
    """Tables as a migration makes them, an enum, varchar or an extra column: nothing to name."""
    names, tenant_url, _reader = tenant
    as_tenant(tenant_url, LESSON_DDL + honest)
    assert problems(fresh_database, names) == []


def test_code_the_submissions_role_owns_elsewhere_counts_too(
    fresh_database: str, tenant: tuple[Names, str, str]
) -> None:
    """A function in another schema the role made is found when the role is named."""
    names, tenant_url, _reader = tenant
    as_tenant(
        tenant_url,
        LESSON_DDL + "CREATE SCHEMA elsewhere; CREATE FUNCTION elsewhere.f() "
        "RETURNS int LANGUAGE sql AS 'SELECT 1'",
    )
    assert problems(fresh_database, names, owner=False) == []
    assert "a function elsewhere.f()" in problems(fresh_database, names)


def readable(database_url: str, names: Names, tenant_url: str) -> None:
    """The lesson's tables in the tenant's schema, readable by its reader (grant_reader)."""
    as_tenant(tenant_url, LESSON_DDL)
    admin = connect_admin(database_url)
    with admin.cursor() as cursor:
        grant_reader(cursor, names)
    admin.close()


def test_the_reader_refuses_tables_that_changed_while_the_checks_ran(
    fresh_database: str, tenant: tuple[Names, str, str]
) -> None:
    """A function made after the migration (by the host, say) stops every later read."""
    names, tenant_url, reader_url = tenant
    readable(fresh_database, names, tenant_url)
    db = Database(reader_url, names.tenant)
    try:
        assert db.count("k") == 0
        as_tenant(tenant_url, FUNCTION)
        with pytest.raises(CheckFailedError) as failure:
            db.count("k")
        assert "could not grade" in failure.value.got
        assert f"a function {names.tenant}.one()" in failure.value.got
    finally:
        db.close()


def test_the_reader_counts_every_row_against_what_the_answers_named(
    fresh_database: str, tenant: tuple[Names, str, str]
) -> None:
    """A run no answer named, or a named run that is not there, fails the read, whatever key."""
    names, tenant_url, reader_url = tenant
    readable(fresh_database, names, tenant_url)
    insert = "INSERT INTO sessions VALUES ('s1', 'u', 't'); " + " ".join(
        f"INSERT INTO runs (id, session_id, status, idempotency_key, input) "
        f"VALUES ('{run}', 's1', 'pending', '{key}', 'hi');"
        for run, key in (("r1", "k"), ("r2", "k-again"))
    )
    as_tenant(tenant_url, insert)
    db = Database(reader_url, names.tenant)
    try:
        db.ledger.note(
            {"op": "http", "method": "POST", "path": "/sessions"},
            {"status": 201, "json": {"sessionId": "s1"}},
        )
        for _request in range(2):  # the same runId twice, while the table holds two runs
            db.ledger.note(
                {"op": "http", "method": "POST", "path": "/chat"},
                {"status": 202, "json": {"runId": "r1"}},
            )
        with pytest.raises(CheckFailedError) as failure:
            db.count("k")
        assert "2 rows: 1 that no answer named" in failure.value.got
        db.ledger.add("runs", "r2")
        assert db.count("k") == 1
        db.ledger.add("runs", "r3")
        with pytest.raises(CheckFailedError) as failure:
            db.count("k")
        assert "1 named that are not there" in failure.value.got
    finally:
        db.close()


def test_the_reader_holds_only_what_reading_needs(
    fresh_database: str, tenant: tuple[Names, str, str]
) -> None:
    """The reader owns nothing, inherits nothing, and is refused anything but reading."""
    names, tenant_url, reader_url = tenant
    readable(fresh_database, names, tenant_url)
    connection = psycopg2.connect(reader_url)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolinherit, rolcreaterole, rolcreatedb FROM pg_roles"
            " WHERE rolname = current_user"
        )
        assert cursor.fetchone() == (False, False, False, False)
        for statement in (
            sql.SQL("INSERT INTO {}.sessions VALUES ('s', 'u', 't')"),
            sql.SQL("CREATE TABLE {}.planted (id int)"),
            sql.SQL("SELECT * FROM {}.alembic_version"),
        ):
            with pytest.raises(psycopg2.errors.InsufficientPrivilege):
                cursor.execute(statement.format(sql.Identifier(names.tenant)))
            connection.rollback()
    connection.close()
