"""A Postgres of the grader's own: where grading runs on Postgres unless DATABASE_URL is given.

Where the server binaries are installed (labs/pg/cluster.py finds them), the
first submission that needs Postgres starts a cluster for the grading
process, which every later one shares:

- socket only, in a folder of its own; every role logs in with a password
  (scram-sha-256), so a sandboxed submission may reach the socket and still
  be nobody but its own role;
- the grader is its superuser and keeps to the `postgres` database, which no
  other role may connect to (nor to template1);
- each submission gets a database of its own (submission_database), which
  only the roles made for that submission may connect to
  (on_postgres_roles.py grants CONNECT on it and nothing else), dropped when
  its grading ends;
- the cluster is removed when the process ends, and a reaper
  (labs/pg/reaper.py) stops it and removes its folder if the process is
  killed instead.

No role of anyone's server is asked for a privilege: a learner whose
DATABASE_URL is the README's role, or compose's, grades themselves on this
cluster with no grant, and gets the points the instructor's run gives.

Which server a grading run uses is server_choice.py's to say.
"""

from __future__ import annotations

import atexit
import contextlib
import secrets
import subprocess
import threading
from collections.abc import Iterator

import psycopg2

from labs.pg.cluster import Autocommit, TempCluster, find_bindir

from .errors import GradingRefusedError
from .on_postgres_url import database_of_its_own

ADMIN_DATABASE = "postgres"  # the grader's own: no other role may connect to it
SUBMISSION_PREFIX = "lab_db_"
PUBLIC = "FROM PUBLIC"  # every role's CONNECT, taken back from each database of the cluster
_lock = threading.Lock()
_started: dict[str, TempCluster] = {}


def own_cluster() -> TempCluster | None:
    """This process's cluster, started now if need be; None without the server binaries.

    GradingRefusedError when the binaries are there but the cluster will not start.
    """
    bindir = find_bindir()
    if bindir is None:
        return None
    with _lock:
        if "cluster" not in _started:
            try:
                cluster = TempCluster(bindir, auth="scram")
            except (OSError, subprocess.SubprocessError) as error:
                raise GradingRefusedError(
                    f"could not make a throwaway Postgres with {bindir}: {error}"
                ) from None
            try:
                cluster.start()
                with Autocommit(cluster.url(ADMIN_DATABASE)) as cursor:
                    for database in (ADMIN_DATABASE, "template1"):
                        cursor.execute(
                            f'REVOKE CONNECT, TEMPORARY ON DATABASE "{database}" FROM PUBLIC'
                        )
            except (OSError, subprocess.SubprocessError, psycopg2.Error) as error:
                cluster.destroy()
                raise GradingRefusedError(
                    f"could not start a throwaway Postgres with {bindir}: {error}"
                ) from None
            atexit.register(cluster.destroy)
            _started["cluster"] = cluster
        return _started["cluster"]


@contextlib.contextmanager
def submission_database() -> Iterator[str | None]:
    """A database of one submission's own on the grader's cluster, dropped afterwards.

    Yields the grader's URL for it (its superuser's), or None without the
    server binaries. Nobody else may connect to it until the submission's
    roles are granted CONNECT on it.
    """
    cluster = own_cluster()
    if cluster is None:
        yield None
        return
    name = SUBMISSION_PREFIX + secrets.token_hex(5)
    try:
        with Autocommit(cluster.url(ADMIN_DATABASE)) as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
            cursor.execute(f'REVOKE CONNECT, TEMPORARY ON DATABASE "{name}" {PUBLIC}')
    except psycopg2.Error as error:
        raise GradingRefusedError(
            f"could not make a database on the grader's own Postgres: {error}".strip()
        ) from None
    try:
        yield cluster.url(name)
    finally:
        with contextlib.suppress(psycopg2.Error), Autocommit(cluster.url(ADMIN_DATABASE)) as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def grading_server(database_url: str | None) -> Iterator[str | None]:
    """Where one submission is graded on Postgres: a database of its own on the instructor's
    server when given (on_postgres_url.py), else on the grader's cluster, else None (no server
    binaries). The URL is the grader's."""
    if database_url:
        with database_of_its_own(database_url) as url:
            yield url
        return
    with submission_database() as url:
        yield url
