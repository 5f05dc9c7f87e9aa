"""The roles a submission is graded with on Postgres, made with the least the grader holds.

Each submission is graded in a database of its own, which the grader's role
makes (CREATEDB, on_postgres_url.py; on the grader's own cluster it is the
superuser) and therefore owns, with CREATE and CONNECT to grant. To give the
submission roles of its own there, the grader's role needs one of:
- SUPERUSER (the grader's own cluster, the Classroom service's `koda`,
  Debian's `postgres` over TCP), or
- CREATEROLE, which the kit asks for only from PostgreSQL 16 on.
Without either it may still grade one submission, as itself, in that
database (on_postgres.graders_role), never a class (class_database.py).
What a role lacks is refused before anything is made, naming the command
that grants it (missing_privileges). The grader grants itself
membership in each tenant it creates (`GRANT tenant TO CURRENT_USER`): a
CREATEROLE role may on Postgres 15, and holds the ADMIN OPTION that allows it
on 16, where it otherwise could not make the tenant's schema ("must be member
of role") nor drop what the tenant owns.

Per submission (names in labs/pg/tenants.py):
- the tenant logs in with a password, is no superuser, creates no role or
  database, inherits nothing, has at most TENANT_CONNECTIONS connections and
  a statement timeout, and owns its schema; it may create schemas only while
  its migration runs (Alembic's env.py asks for it);
- the reader logs in with a password, owns nothing, and is granted USAGE on
  the tenant's schema and SELECT on its three tables, after the catalog
  showed them to be plain tables (labs/pg/plain.py).
Both are dropped at the end with everything the tenant made; what a killed
run left behind (its database included) is dropped by the next one
(clean_leftovers).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any

import psycopg2
from psycopg2 import sql
from sqlalchemy.engine import make_url

from labs.pg.databases import drop_database, end_sessions
from labs.pg.plain import PINNED, TABLES
from labs.pg.tenants import TENANT_PREFIX, Names, on_database, token_of
from labs.term.i18n import N_, _

from .errors import GradingRefusedError

# The host's pool is 10 connections plus 10 overflow; three neighbours holding this many each
# and one honest submission still fit in a stock server's 100 connections.
TENANT_CONNECTIONS = 20
READER_CONNECTIONS = 3
TENANT_SETTINGS = {
    "statement_timeout": "30s",
    "lock_timeout": "10s",
    "idle_in_transaction_session_timeout": "60s",
}
SAFE_CREATEROLE = 160000  # server_version_num from which CREATEROLE cannot widen itself
# What to do instead of a grant no server before 16 can give safely.
OWN_CLUSTER_ADVICE = N_(
    "grade on a Postgres cluster of the grader's own instead (install the PostgreSQL server "
    "binaries, `apt-get install postgresql`, and leave LAB_POSTGRES unset or set it to own), "
    "or as the superuser of a server kept for grading"
)
PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_]*")
RESERVED = {"all", "user", "public", "current_user", "session_user", "none", "default", "role"}


@dataclass(frozen=True)
class Missing:
    """A privilege the grader's role lacks, and the one command that grants it.

    Where no grant is safe there is no command: what then says what to do
    instead, and instead holds that advice alone (a msgid), for a list of fixes.
    """

    what: str
    command: str = ""
    instead: str = ""

    def __str__(self) -> str:
        if not self.command:
            return self.what
        return f"{self.what}: run `{self.command}` as a superuser"


def shown(name: str) -> str:
    """A role or database name as a command a person copies would spell it."""
    if PLAIN_NAME.fullmatch(name) and name not in RESERVED:
        return name
    return '"' + name.replace('"', '""') + '"'


def safe_url(database_url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(database_url).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: say nothing of it
        return "DATABASE_URL"


def first_line(error: BaseException) -> str:
    """The server's or the driver's first line about an error."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def connect_admin(database_url: str, marker: str = TENANT_PREFIX.rstrip("_")) -> Any:
    """The grader's own autocommit connection, named marker, that resolves no learner's names."""
    try:
        connection = psycopg2.connect(
            database_url, connect_timeout=5, application_name=marker, options=PINNED
        )
    except psycopg2.Error as error:
        raise GradingRefusedError(
            f"cannot connect to {safe_url(database_url)}: {first_line(error)}"
        ) from None
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("SET lock_timeout = '10s'")
    return connection


def missing_privileges(cursor: Any, *, roles: bool = False) -> list[Missing]:
    """What the grader's role lacks to grade on this server; empty when nothing.

    A submission needs a database of its own (CREATEDB). With roles (a class,
    whose submissions must not reach each other), the grader must also make
    each submission's roles (CREATEROLE), which is never advised on a server
    where it could widen itself (PostgreSQL 15 and older).
    """
    cursor.execute(
        "SELECT current_user, r.rolsuper, r.rolcreatedb, r.rolcreaterole,"
        " current_setting('server_version_num')::int"
        " FROM pg_catalog.pg_roles r WHERE r.rolname = current_user"
    )
    me, superuser, createdb, createrole, version = cursor.fetchone()
    if superuser:
        return []
    if roles and not createrole and version < SAFE_CREATEROLE:
        # No grant lets this role grade a class here: CREATEROLE could grant itself
        # pg_execute_server_program, so it is never advised, and CREATEDB alone would not do.
        return [Missing(without_createrole(me, version // 10000), instead=OWN_CLUSTER_ADVICE)]
    missing = []
    if not createdb:
        missing.append(
            Missing(
                f"the role {me} may not make a database for each submission (CREATEDB)",
                f"ALTER ROLE {shown(me)} CREATEDB;",
            )
        )
    if roles and not createrole:
        missing.append(
            Missing(
                f"the role {me} may not create the submissions' roles (CREATEROLE)",
                f"ALTER ROLE {shown(me)} CREATEROLE;",
            )
        )
    return missing


def without_createrole(role: str, major: int) -> str:
    """What to do when a role lacks CREATEROLE on a server where granting it is unsafe."""
    return _(
        "the role {role} may not create the submissions' roles, and on PostgreSQL {major} "
        "CREATEROLE would let it make itself a superuser: {advice}"
    ).format(role=role, major=major, advice=_(OWN_CLUSTER_ADVICE))


def refuse_without_privileges(cursor: Any, *, roles: bool = False) -> None:
    """Raise GradingRefusedError naming each missing privilege and its command."""
    missing = missing_privileges(cursor, roles=roles)
    if missing:
        raise GradingRefusedError("grading on Postgres needs more: " + "; ".join(map(str, missing)))


def may_create_roles(cursor: Any) -> bool:
    """Whether the grader's role may give a submission roles of its own."""
    cursor.execute(
        "SELECT rolsuper OR rolcreaterole FROM pg_catalog.pg_roles WHERE rolname = current_user"
    )
    return bool(cursor.fetchone()[0])


def create_roles(cursor: Any, names: Names) -> tuple[str, str]:
    """Make the tenant (and its schema) and the reader; return their passwords."""
    passwords = secrets.token_urlsafe(18), secrets.token_urlsafe(18)
    tenant, reader = sql.Identifier(names.tenant), sql.Identifier(names.reader)
    database = sql.Identifier(cursor.connection.info.dbname)
    statements = [
        sql.SQL(
            "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION "
            "NOBYPASSRLS CONNECTION LIMIT {} PASSWORD {}"
        ).format(tenant, sql.Literal(TENANT_CONNECTIONS), sql.Literal(passwords[0])),
        sql.SQL(
            "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION "
            "NOBYPASSRLS CONNECTION LIMIT {} PASSWORD {}"
        ).format(reader, sql.Literal(READER_CONNECTIONS), sql.Literal(passwords[1])),
        sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(tenant, tenant),
        # env.py says CREATE SCHEMA IF NOT EXISTS, which asks for this even when the schema is
        # there; revoked once the migration ran (end_migration).
        sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(database, tenant),
        sql.SQL("ALTER ROLE {} SET search_path = {}").format(tenant, tenant),
        *(
            sql.SQL("ALTER ROLE {} SET {} = {}").format(
                tenant, sql.Identifier(name), sql.Literal(value)
            )
            for name, value in TENANT_SETTINGS.items()
        ),
    ]
    cursor.execute("SELECT has_database_privilege('public', current_database(), 'CONNECT')")
    if not cursor.fetchone()[0]:
        statements.append(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(database, tenant, reader)
        )
    cursor.execute("SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user")
    if not cursor.fetchone()[0]:
        # Membership lets a CREATEROLE grader make the schema the tenant owns, end the
        # roles' sessions and drop what they own (Postgres 16: the ADMIN OPTION allows it).
        statements.insert(2, sql.SQL("GRANT {}, {} TO CURRENT_USER").format(tenant, reader))
    try:
        for statement in statements:
            on_database(cursor, statement)
    except psycopg2.Error as error:
        raise GradingRefusedError(
            f"could not make the submission's role: {first_line(error)}"
        ) from None
    return passwords


def end_migration(cursor: Any, names: Names) -> None:
    """End whatever the migration left connected, and take back its right to create schemas."""
    end_sessions(cursor, roles=[names.tenant])
    on_database(
        cursor,
        sql.SQL("REVOKE CREATE ON DATABASE {} FROM {}").format(
            sql.Identifier(cursor.connection.info.dbname), sql.Identifier(names.tenant)
        ),
    )


def grant_reader(cursor: Any, names: Names) -> None:
    """USAGE on the tenant's schema and SELECT on those of its three tables that exist."""
    tenant, reader = sql.Identifier(names.tenant), sql.Identifier(names.reader)
    cursor.execute(
        "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
        " ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'"
        " AND c.relname = ANY(%s)",
        (names.tenant, list(TABLES)),
    )
    tables = [sql.Identifier(names.tenant, row[0]) for row in cursor.fetchall()]
    # As the owner: a grant is the owner's to make, and running as it here runs nothing of its.
    cursor.execute(sql.SQL("SET ROLE {}").format(tenant))
    try:
        cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(tenant, reader))
        if tables:
            cursor.execute(
                sql.SQL("GRANT SELECT ON TABLE {} TO {}").format(sql.SQL(", ").join(tables), reader)
            )
    finally:
        cursor.execute("RESET ROLE")


def drop_roles(cursor: Any, names: Names) -> list[str]:
    """Drop the tenant's schema, all it owned, and both roles; return what could not be dropped.

    Each step is tried whatever the others did: a step that fails leaves
    its object to the next run's clean-up, and says so.
    """
    tenant, reader = sql.Identifier(names.tenant), sql.Identifier(names.reader)
    database = sql.Identifier(cursor.connection.info.dbname)
    failed: list[str] = []

    def attempt(what: str, statement: sql.Composable | None, role: str | None = None) -> None:
        try:
            if statement is None:
                end_sessions(cursor, roles=[names.tenant, names.reader])
            elif role is None:
                cursor.execute(statement)
            elif role_exists(cursor, role):
                # Both such steps (DROP OWNED, REVOKE) change the database's privileges.
                on_database(cursor, statement)
        except psycopg2.Error as error:
            failed.append(f"{what}: {first_line(error)}")

    attempt("ending their sessions", None)
    attempt(
        f"dropping schema {names.tenant}",
        sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(tenant),
    )
    attempt(
        f"dropping what {names.tenant} owns",
        sql.SQL("DROP OWNED BY {}").format(tenant),
        names.tenant,
    )
    revoke = sql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(database, reader)
    attempt(f"revoking {names.reader}'s privileges", revoke, names.reader)
    for role, name in ((tenant, names.tenant), (reader, names.reader)):
        attempt(f"dropping role {name}", sql.SQL("DROP ROLE IF EXISTS {}").format(role))
    return failed


def role_exists(cursor: Any, role: str) -> bool:
    """Whether a role of that name exists."""
    cursor.execute("SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = %s", (role,))
    return cursor.fetchone() is not None


def leftovers(cursor: Any) -> list[Names]:
    """The grading runs whose roles, schema or database remain while no grader holds them.

    Only databases the grader's role owns count: only those could it drop.
    """
    cursor.execute(
        "SELECT rolname::text FROM pg_catalog.pg_roles UNION SELECT nspname::text"
        " FROM pg_catalog.pg_namespace UNION SELECT datname::text FROM pg_catalog.pg_database"
        " WHERE pg_catalog.pg_get_userbyid(datdba) = current_user"
    )
    tokens = {token_of(row[0]) for row in cursor.fetchall()} - {None}
    # A run is alive while the grader's own connection, named for it, is open: a connection
    # of the run's own roles, which could take any name, does not count.
    cursor.execute(
        "SELECT usename::text, application_name FROM pg_catalog.pg_stat_activity"
        " WHERE application_name LIKE %s",
        (TENANT_PREFIX + "%",),
    )
    alive = {token_of(name) for user, name in cursor.fetchall() if token_of(user or "") is None}
    return [Names(token) for token in sorted(t for t in tokens - alive if t is not None)]


def clean_leftovers(cursor: Any) -> tuple[list[str], list[str]]:
    """Drop what killed grading runs left; return the runs removed (by the name of their
    tenant) and what could not be.

    Every leftover database goes first: a run's roles (of another token) may own a schema
    in one, and cannot be dropped while it stands.
    """
    found = leftovers(cursor)
    removed, failed = [], []
    for names in found:
        try:
            drop_database(cursor, names.tenant)
        except psycopg2.Error as error:
            failed.append(f"dropping database {names.tenant}: {first_line(error)}")
    for names in found:
        problems = drop_roles(cursor, names)
        failed += problems
        if not problems:
            removed.append(names.tenant)
    return removed, failed
