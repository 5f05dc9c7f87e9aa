"""A Postgres of the grader's own, for the migration criterion when no DATABASE_URL is given.

Without a server, the only way to know what a migration leaves is to run
it: the first submission that needs one starts a throwaway cluster (its
server binaries installed, labs/pg/cluster.py), which every later one in the
process shares, each in a tenant of its own, and which is removed when the
process ends. It asks every role for a password (scram-sha-256), so the
sandboxed migration may reach its socket and still log in as nothing but its
own role.
"""

from __future__ import annotations

import atexit
import subprocess
import threading

import psycopg2

from labs.pg.cluster import TempCluster, find_bindir

from .errors import GradingRefusedError

DATABASE = "lab_grading"
_lock = threading.Lock()
_started: dict[str, TempCluster] = {}


def throwaway_url() -> str | None:
    """A database on this process's throwaway cluster, started now if need be; None without one.

    GradingRefusedError when the server binaries are there but the cluster
    will not start.
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
                cluster.create_database(DATABASE)
            except (OSError, subprocess.SubprocessError, psycopg2.Error) as error:
                cluster.destroy()
                raise GradingRefusedError(
                    f"could not start a throwaway Postgres with {bindir}: {error}"
                ) from None
            atexit.register(cluster.destroy)
            _started["cluster"] = cluster
        return _started["cluster"].url(DATABASE)
