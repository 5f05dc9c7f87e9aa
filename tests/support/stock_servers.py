"""The Postgres servers people grade on, as throwaway clusters: Debian's and compose's."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg2

from labs.pg.cluster import Auth, TempCluster
from labs.trees.finding import REPO_ROOT

INIT_SCRIPT = REPO_ROOT / "deploy" / "postgres-init.sh"


@contextmanager
def started(
    bindir: Path, *, auth: Auth = "trust", tcp: bool = False, max_connections: int = 200
) -> Iterator[TempCluster]:
    """A throwaway cluster set up as asked, running until the block ends."""
    cluster = TempCluster(bindir, auth=auth, tcp=tcp, max_connections=max_connections)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


def superuser(url: str, *statements: str) -> None:
    """Run statements as the cluster's superuser, each on its own."""
    connection = psycopg2.connect(url)
    connection.autocommit = True
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    connection.close()


def compose_role(cluster: TempCluster) -> str:
    """The compose set-up on a cluster: deploy/postgres-init.sh's role, and its URL over TCP.

    The SQL is taken from the script itself (its psql variable filled in as
    compose fills it), and the superuser is refused over TCP as the script
    makes it, so this follows the script as it changes.
    """
    script = INIT_SCRIPT.read_text(encoding="utf-8")
    body = script.split("<<'SQL'\n", 1)[1].split("\nSQL\n", 1)[0]
    body = body.replace(":'koda_password'", "'koda'")
    url = cluster.create_database("koda")
    superuser(url, *(s for s in body.split(";") if s.strip()))
    if re.search(r"host all \$POSTGRES_USER all reject", script):
        cluster.allow("host all postgres all reject")
    return cluster.tcp_url("koda", "koda", "koda")


def until_accepted(url: str, timeout: float = 10.0) -> None:
    """Wait until a login works (after pg_hba.conf was reread)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg2.connect(url, connect_timeout=2).close()
            return
        except psycopg2.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
