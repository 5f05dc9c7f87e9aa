"""A throwaway Postgres cluster: its own data directory, socket and lifetime.

The tests, `python -m labs race` and `python -m labs bench` never touch a
learner's database unless given one: they start a cluster of their own, make
databases in it, and remove it all at the end.

Such a cluster trusts whoever connects, so it must not be reachable by anyone
else on the machine: it listens on no TCP port at all, only on a Unix socket
inside a directory that only its owner may enter (mode 0700). Another local
user cannot even reach the socket; root and the owner can. Postgres refuses
to run as root, so as root the cluster runs as `postgres`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg2


def find_bindir() -> Path | None:
    """Return the directory holding initdb and pg_ctl, or None when Postgres is absent."""
    on_path = shutil.which("pg_ctl")
    candidates = [str(Path(on_path).resolve().parent)] if on_path else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for directory in candidates:
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


def free_port() -> int:
    """Ask the kernel for a free TCP port on loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TempCluster:
    """One Postgres server in a temporary directory; start(), stop(), url()."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        # Tests trade durability for speed; the benchmark keeps Postgres's real commit cost.
        self.durable = durable
        # No TCP port is opened; the number only names the socket file (.s.PGSQL.<port>).
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="koda-pg-"))
        self.root.chmod(0o700)  # mkdtemp's default, said out loud: the socket lives here
        self.socket_dir = self.root
        self.datadir = self.root / "data"
        self.logfile = self.root / "server.log"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.datadir),
            "-U",
            "postgres",
            # Trust is safe only behind the private directory; TCP is refused outright.
            "--auth-local=trust",
            "--auth-host=reject",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        )

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        options = (
            f"-p {self.port} -c listen_addresses='' -k {self.socket_dir} "
            "-c unix_socket_permissions=0700 -c max_connections=200"
        )
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            "pg_ctl",
            "-D",
            str(self.datadir),
            "-l",
            str(self.logfile),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        self.wait_ready()

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (fast: disconnect clients, roll back their transactions)."""
        self._run("pg_ctl", "-D", str(self.datadir), "-m", mode, "-w", "stop")

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Block until a connection succeeds."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg2.connect(self.url("postgres"), connect_timeout=2).close()
                return
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def url(self, database: str = "postgres") -> str:
        """A URL for one database of this cluster, through its socket.

        The socket directory and port ride in the query (`?host=/dir&port=N`),
        a form SQLAlchemy, psycopg2, psql and pgbench all accept.
        """
        return f"postgresql://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def create_database(self, name: str) -> str:
        """Create an empty database and return its URL."""
        with Autocommit(self.url()) as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, disconnecting whoever is still in it."""
        with Autocommit(self.url()) as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def destroy(self) -> None:
        """Stop the server if it runs and delete its directory."""
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


class Autocommit:
    """A short-lived autocommit cursor: `with Autocommit(url) as cursor: ...`."""

    def __init__(self, url: str) -> None:
        self.connection = psycopg2.connect(url)
        self.connection.autocommit = True

    def __enter__(self) -> psycopg2.extensions.cursor:
        return self.connection.cursor()

    def __exit__(self, *exc: object) -> None:
        self.connection.close()
