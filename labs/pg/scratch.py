"""A database to experiment in: made fresh for one command, dropped afterwards.

`python -m labs race` and `python -m labs bench` write thousands of rows. They
never write them into a learner's tables: given a server (a URL), they create
a database of their own in it; given nothing, they start a throwaway cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg2
from sqlalchemy.engine import make_url

from labs.trees.finding import REPO_ROOT

from .cluster import TempCluster, find_bindir
from .databases import drop_database
from .errors import ScratchDatabaseError as ScratchDatabaseError  # where commands import it


@contextmanager
def scratch_database(
    server_url: str | None, purpose: str, *, durable: bool = False
) -> Iterator[str]:
    """Yield the URL of a new empty database, on server_url or on a throwaway cluster.

    A throwaway cluster skips fsync unless durable is set: fine for tests and
    demonstrations, wrong for measuring what a commit costs.
    """
    name = f"koda_{purpose}_{uuid.uuid4().hex[:8]}"
    if server_url:
        yield from _on_server(server_url, name)
        return
    bindir = find_bindir()
    if bindir is None:
        raise ScratchDatabaseError(
            "no database: pass --database-url (or set DATABASE_URL) to a Postgres server, "
            "or install the PostgreSQL server binaries to let the command start its own"
        )
    cluster = TempCluster(bindir, durable=durable)
    try:
        cluster.start()
        yield cluster.create_database(name)
    finally:
        cluster.destroy()


def _on_server(server_url: str, name: str) -> Iterator[str]:
    admin = _autocommit_connection(server_url)
    try:
        with admin.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    except psycopg2.Error as error:
        admin.close()
        raise ScratchDatabaseError(
            f"cannot create a scratch database on {_safe(server_url)}: {error}".strip()
        ) from None
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.cursor() as cursor:
            drop_database(cursor, name)
        admin.close()


def _autocommit_connection(url: str) -> psycopg2.extensions.connection:
    try:
        connection = psycopg2.connect(url, connect_timeout=5)
    except psycopg2.Error as error:
        raise ScratchDatabaseError(f"cannot connect to {_safe(url)}: {error}".strip()) from None
    connection.autocommit = True
    return connection


def _safe(url: str) -> str:
    return make_url(url).render_as_string(hide_password=True)


def migrate(database_url: str, tree: str = "solution") -> None:
    """Bring the tree's tables up to the head of its migrations in the checkout, with Alembic."""
    env = {**os.environ, "DATABASE_URL": database_url}
    env.pop("MOCK", None)
    versions = REPO_ROOT / "migrations" / "versions" / tree
    done = subprocess.run(
        [sys.executable, "-m", "labs.pg.migrate", "--tree", tree, "--versions", str(versions)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise ScratchDatabaseError(f"alembic upgrade failed for {tree}:\n{done.stderr.strip()}")
