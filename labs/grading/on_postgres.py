"""Grading on Postgres: a role and a schema per submission, built by its own migration.

The checks on Postgres only mean something against the tables the learner's
migration creates, so each grading run makes a role of its own and a fresh
schema that role owns, applies the submission's migration there as that role
(in the submission's sandbox), runs the checks as that role, and at the end
drops the role, the schema and everything the role owned (and nothing else).

The role holds no privilege but its schema: other submissions' schemas, the
trees' own schemas (`solution`, `starter`) and tables in `public` were made
by other roles and grant it nothing. That boundary is Postgres's own; it is
only as strong as the server's authentication (see INSTRUCTORS.md: with
`trust`, a learner's code may log in as another role).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import psycopg2
from psycopg2 import sql

from labs.sandbox.box import Sandbox
from labs.trees.finding import REPO_ROOT

from .errors import MigrationFailedError
from .isolate import needs_network

ERROR_LINE = re.compile(r"\w+(Error|Exception)\b")


@dataclass(frozen=True)
class Tenant:
    """One submission's place in the database: its role (named like its schema) and URL."""

    schema: str
    url: str  # DATABASE_URL for the submission: logs in as its role


def grading_schema(tree: Path) -> str:
    """A schema name no other grading run uses: grade_<tree name>_<random>."""
    stem = re.sub(r"[^a-z0-9_]", "_", tree.name.lower())[:30]
    return f"grade_{stem}_{secrets.token_hex(4)}"


def as_role(database_url: str, role: str, password: str) -> str:
    """The same database URL, logging in as another role."""
    parts = urlsplit(database_url)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{quote(role, safe='')}:{quote(password, safe='')}@{host}"
    return urlunsplit(parts._replace(netloc=netloc))


def apply_migration(tenant: Tenant, versions: Path, timeout: float) -> None:
    """alembic upgrade head from the submission's folder, as its role, in a sandbox."""
    with Sandbox(network=needs_network(tenant.url)) as box:
        shared = box.share(versions, "versions")
        command = [sys.executable, "-m", "alembic", "-x", "tree=starter"]
        command += ["-x", f"schema={tenant.schema}", "-x", f"versions={shared}"]
        done = box.run(
            [*command, "upgrade", "head"],
            timeout=timeout,
            env={"DATABASE_URL": tenant.url},
            cwd=REPO_ROOT,
        )
    if done.timed_out:
        raise MigrationFailedError(f"the migration did not finish within {timeout:g} s")
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if ERROR_LINE.search(line)]
        raise MigrationFailedError(
            "the migration failed: " + ((errors or lines or ["?"])[-1]).strip()
        )


@contextlib.contextmanager
def migrated_schema(
    database_url: str, tree: Path, versions: Path, timeout: float
) -> Iterator[Tenant]:
    """Yield a fresh role and schema, migrated from versions; drop both afterwards."""
    schema = grading_schema(tree)
    tenant = Tenant(schema, as_role(database_url, schema, secrets.token_urlsafe(18)))
    try:
        create_tenant(database_url, tenant)
        tenant = Tenant(schema, over_socket(database_url, tenant.url) or tenant.url)
        apply_migration(tenant, versions, timeout)
        yield tenant
    finally:
        drop_tenant(database_url, tenant.schema)


def over_socket(database_url: str, url: str) -> str | None:
    """The URL over the server's Unix socket, when it is local and others may reach the socket.

    A sandbox without a network can still reach Postgres through a socket
    file; a TCP URL to this machine is rewritten to it when that is possible.
    """
    parts = urlsplit(url)
    if parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        return None
    with contextlib.suppress(psycopg2.Error):
        connection = admin(database_url)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SHOW unix_socket_directories")
                folders = str((cursor.fetchone() or [""])[0]).split(",")
                cursor.execute("SHOW port")
                port = str((cursor.fetchone() or [""])[0])
        finally:
            connection.close()
        for folder in (f.strip() for f in folders):
            if folder.startswith("/") and reachable(Path(folder)):
                login = parts.netloc.rpartition("@")[0]
                query = urlencode({"host": folder, "port": port})
                return urlunsplit(parts._replace(netloc=f"{login}@", query=query))
    return None


def reachable(folder: Path) -> bool:
    """Whether any user may pass through folder and every folder above it."""
    return all(os.stat(p).st_mode & 0o001 for p in [folder, *folder.parents])


def admin(database_url: str) -> psycopg2.extensions.connection:
    """The grader's own autocommit connection."""
    connection = psycopg2.connect(database_url, connect_timeout=5)
    connection.autocommit = True
    return connection


def create_tenant(database_url: str, tenant: Tenant) -> None:
    """The role, with nothing but a schema of its own; it may not make others."""
    password = urlsplit(tenant.url).password or ""
    role = sql.Identifier(tenant.schema)
    connection = admin(database_url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT "
                    "NOREPLICATION CONNECTION LIMIT 40 PASSWORD {}"
                ).format(role, sql.Literal(password))
            )
            cursor.execute(sql.SQL("CREATE SCHEMA {} AUTHORIZATION {}").format(role, role))
            # Alembic's env.py says CREATE SCHEMA IF NOT EXISTS, which asks for this even
            # when the schema is there; any schema the role makes is its own, dropped with it.
            cursor.execute(
                sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(
                    sql.Identifier(connection.info.dbname), role
                )
            )
            cursor.execute(sql.SQL("ALTER ROLE {} SET search_path = {}").format(role, role))
    finally:
        connection.close()


def drop_tenant(database_url: str, schema: str) -> None:
    """Drop the role and all it owned; a database that is gone has nothing to drop."""
    with contextlib.suppress(psycopg2.Error):
        connection = admin(database_url)
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                    (schema,),
                )
                cursor.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )
                cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (schema,))
                if cursor.fetchone():
                    cursor.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(schema)))
                    cursor.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(schema)))
        finally:
            connection.close()
