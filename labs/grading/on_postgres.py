"""Grading on Postgres: a schema per submission, in its own database, built by its migration.

The checks on Postgres only mean something against the tables the learner's
migration creates, so each grading run takes a database of the submission's
own (on_postgres_throwaway.py, on_postgres_url.py) and there makes roles of
its own (on_postgres_roles.py) and a fresh schema the tenant owns, applies
the submission's migration there as the tenant (in the submission's
sandbox), makes sure the catalog shows plain tables (labs/pg/plain.py), lets
the reader read them, and at the end drops both roles, the schema and all the
tenant made (and nothing else). Where the grader's role may not make roles
(CREATEDB only, a learner grading their own work on their server), the
submission runs as that role instead, in the same database of its own
(graders_role).

Whose failure it is decides how it is reported. Before any of the learner's
code ran, a failure is the grading machine's: no connection, too few
privileges, a role that cannot log in (GradingRefusedError, "not graded").
From the migration on, it is the submission's: a migration that fails, tables
made in another schema than the one it was given, or tables that are not
plain tables ("could not grade", which scores nothing).

The URL's transport is kept as given: a TCP URL stays TCP (the sandbox then
keeps its loopback network), a socket URL stays a socket. The boundary is
Postgres's own, as strong as the server's authentication: every role is
given a password, which `trust` (as in the test clusters) never asks for.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg2
from psycopg2 import sql

from labs.pg.databases import end_sessions
from labs.pg.errors import NotPlainTablesError
from labs.pg.plain import PINNED, TABLES, ensure_plain_tables
from labs.pg.tenants import Names, new_names
from labs.sandbox.box import Sandbox
from labs.sandbox.network import url_needs_network
from labs.trees.finding import REPO_ROOT
from labs.untrusted import clean_text

from .errors import GradingRefusedError, MigrationFailedError
from .migration_flaws import elsewhere
from .on_postgres_roles import (
    TENANT_CONNECTIONS,
    TENANT_SETTINGS,
    clean_leftovers,
    connect_admin,
    create_roles,
    drop_roles,
    end_migration,
    first_line,
    grant_reader,
    may_create_roles,
    safe_url,
)

NOT_GRADED = "not graded: "  # the grading machine's failure: the criterion counts for nothing
COULD_NOT_GRADE = "could not grade: "  # the submission's: the criterion scores nothing
ERROR_LINE = re.compile(r"\w+(Error|Exception)\b")
# Postgres's words when a migration reaches for a schema other than the one it was given.
DENIED_SCHEMA = re.compile(r'permission denied for schema "?(?P<schema>[A-Za-z_][\w$]{0,62})')
# The lesson's tables that the submission's role made outside its own schema.
ELSEWHERE = """
SELECT n.nspname::text, c.relname::text FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_roles r ON r.oid = c.relowner
WHERE r.rolname = %(owner)s AND n.nspname <> %(schema)s AND c.relname = ANY(%(tables)s)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class o WHERE o.relname = c.relname
                  AND o.relnamespace = (SELECT oid FROM pg_catalog.pg_namespace
                                        WHERE nspname = %(schema)s))
ORDER BY 1, 2
"""
# What the sandbox runs to see the tenant log in from there: the kit's code, not the tree's.
LOGIN_PROBE = "import os, psycopg2; psycopg2.connect(os.environ['DATABASE_URL']).close()"
HBA_ADVICE = (
    "the server must accept password logins for every role over this connection "
    "(pg_hba.conf, e.g. `host all all 127.0.0.1/32 scram-sha-256`)"
)


@dataclass(frozen=True)
class Tenant:
    """One submission's place in the database: its schema, and the two roles' URLs."""

    schema: str
    url: str  # DATABASE_URL for the submission: its migration and its host log in with it
    reader_url: str = ""  # the driver's: reads the schema's three tables, and nothing else


def not_plain(error: NotPlainTablesError) -> str:
    """The submission's failure when its migration made more than plain tables."""
    return f"{COULD_NOT_GRADE}the migration made {'; '.join(error.problems)}"


def after_migration(error: BaseException) -> str:
    """The submission's failure when Postgres refused the grader after its migration ran."""
    return f"{COULD_NOT_GRADE}after the migration ran, Postgres refused the grader: " + first_line(
        error
    )


def as_role(database_url: str, role: str, password: str) -> str:
    """The same database URL, logging in as another role."""
    parts = urlsplit(database_url)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def apply_migration(tenant: Tenant, versions: Path, timeout: float) -> None:
    """Upgrade head from the submission's folder, as its role, in a sandbox.

    labs.pg.migrate builds Alembic's Config around the environment the kit
    ships, so a kit installed without its checkout (no alembic.ini) runs it too.
    """
    with Sandbox(network=url_needs_network(tenant.url)) as box:
        shared = box.share(versions, "versions")
        command = [sys.executable, "-m", "labs.pg.migrate", "--tree", "starter"]
        command += ["--schema", tenant.schema, "--versions", str(shared)]
        done = box.run(
            command,
            timeout=timeout,
            env={"DATABASE_URL": tenant.url},
            cwd=REPO_ROOT,
        )
    if done.timed_out:
        raise MigrationFailedError(f"the migration did not finish within {timeout:g} s")
    if done.returncode != 0:
        denied = DENIED_SCHEMA.search(done.stderr)
        if denied and denied["schema"] != tenant.schema:
            scripts = sorted(versions.glob("*.py"))
            raise MigrationFailedError(elsewhere(denied["schema"], [], scripts))
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if ERROR_LINE.search(line)]
        raise MigrationFailedError(
            "the migration failed: " + ((errors or lines or ["?"])[-1]).strip()
        )


def ensure_logins(tenant: Tenant) -> None:
    """The tenant logs in from a sandbox as its host will, the reader from here; or refuse."""
    with Sandbox(network=url_needs_network(tenant.url)) as box:
        done = box.run(
            [sys.executable, "-I", "-c", LOGIN_PROBE], timeout=30, env={"DATABASE_URL": tenant.url}
        )
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if "psycopg2" in line or "FATAL" in line]
        why = clean_text((said or done.stderr.splitlines() or ["no answer"])[-1], 300)
        raise GradingRefusedError(
            f"a submission's role cannot log in to {safe_url(tenant.url)} from its sandbox "
            f"({why.strip()}): {HBA_ADVICE}"
        )
    try:
        psycopg2.connect(tenant.reader_url, connect_timeout=5, options=PINNED).close()
    except psycopg2.Error as error:
        raise GradingRefusedError(
            f"the grader's reading role cannot log in to {safe_url(tenant.url)} "
            f"({first_line(error)}): {HBA_ADVICE}"
        ) from None


def refuse_tables_elsewhere(cursor: Any, schema: str, owner: str, versions: Path) -> None:
    """Raise MigrationFailedError when the migration made the lesson's tables in another schema.

    The grader gives the submission a schema of its own, first on the
    search_path Alembic's env.py sets; tables made elsewhere (in public where
    the server lets anyone create there, or in a schema the migration made)
    are not where the checks look.
    """
    cursor.execute(ELSEWHERE, {"schema": schema, "owner": owner, "tables": list(TABLES)})
    found: dict[str, list[str]] = {}
    for other, table in cursor.fetchall():
        found.setdefault(other, []).append(table)
    if found:
        other, tables = next(iter(found.items()))
        raise MigrationFailedError(elsewhere(other, tables, sorted(versions.glob("*.py"))))


@contextlib.contextmanager
def migrated_schema(database_url: str, versions: Path, timeout: float) -> Iterator[Tenant]:
    """Yield a fresh tenant whose schema the submission's migration built; drop all afterwards.

    database_url is the grader's, on a database of the submission's own.
    Raises GradingRefusedError before any of the submission's code ran,
    MigrationFailedError or NotPlainTablesError after: a database error once
    the migration ran is the submission's, and fails only the criteria that
    need its tables (never its memory checks).
    """
    names = new_names()
    admin = connect_admin(database_url, names.marker)
    try:
        with admin.cursor() as cursor:
            try:
                clean_leftovers(cursor)
                own_roles = may_create_roles(cursor)
            except psycopg2.Error as error:  # before any of its code ran: the machine's
                raise GradingRefusedError(f"could not tidy up: {first_line(error)}") from None
            if own_roles:
                with roles_of_its_own(cursor, database_url, names, versions, timeout) as tenant:
                    yield tenant
            else:
                with graders_role(cursor, database_url, names, versions, timeout) as tenant:
                    yield tenant
    finally:
        admin.close()


@contextlib.contextmanager
def roles_of_its_own(
    cursor: Any, database_url: str, names: Names, versions: Path, timeout: float
) -> Iterator[Tenant]:
    """The submission's migration and host run as a tenant role, the driver reads as another."""
    try:
        tenant_password, reader_password = create_roles(cursor, names)
        tenant = Tenant(
            names.tenant,
            as_role(database_url, names.tenant, tenant_password),
            as_role(database_url, names.reader, reader_password),
        )
        ensure_logins(tenant)
        apply_migration(tenant, versions, timeout)
        try:
            end_migration(cursor, names)
            refuse_tables_elsewhere(cursor, names.tenant, names.tenant, versions)
            ensure_plain_tables(cursor, names.tenant, names.tenant)
            grant_reader(cursor, names)
        except psycopg2.Error as error:  # from here on, what it meets is the migration's
            raise MigrationFailedError(after_migration(error)) from None
        yield tenant
    finally:
        drop_roles(cursor, names)


@contextlib.contextmanager
def graders_role(
    cursor: Any, database_url: str, names: Names, versions: Path, timeout: float
) -> Iterator[Tenant]:
    """The submission runs as the grader's own role, in its database alone (one's own work).

    A role that may not make roles (CREATEDB only, as the README's and
    compose's) still grades the submission it was given: the database is the
    submission's, and gets the limits a tenant role would have.
    """
    database = sql.Identifier(cursor.connection.info.dbname)
    try:
        statements = [
            sql.SQL("ALTER DATABASE {} CONNECTION LIMIT {}").format(
                database, sql.Literal(TENANT_CONNECTIONS)
            ),
            sql.SQL("ALTER DATABASE {} SET search_path = {}").format(
                database, sql.Identifier(names.tenant)
            ),
            *(
                sql.SQL("ALTER DATABASE {} SET {} = {}").format(
                    database, sql.Identifier(name), sql.Literal(value)
                )
                for name, value in TENANT_SETTINGS.items()
            ),
            sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(names.tenant)),
        ]
        for statement in statements:
            cursor.execute(statement)
        cursor.execute("SELECT current_user::text")
        me = cursor.fetchone()[0]
    except psycopg2.Error as error:
        raise GradingRefusedError(
            f"could not prepare the submission's database: {first_line(error)}"
        ) from None
    tenant = Tenant(names.tenant, database_url, database_url)
    ensure_logins(tenant)
    apply_migration(tenant, versions, timeout)
    try:
        end_sessions(cursor)  # what the migration left connected
        refuse_tables_elsewhere(cursor, names.tenant, me, versions)
        ensure_plain_tables(cursor, names.tenant, me)
    except psycopg2.Error as error:  # from here on, what it meets is the migration's
        raise MigrationFailedError(after_migration(error)) from None
    yield tenant
