"""A throwaway Postgres cluster: its own data directory, socket and lifetime.

The tests, `python -m labs race` and `python -m labs bench` never touch a
learner's database unless given one: they start a cluster of their own, make
databases in it, and remove it all at the end. Each cluster has a reaper
(labs/pg/reaper.py) that does the same if the process that made it is
killed, so no server and no folder outlives it.

By default such a cluster trusts whoever connects, so it must not be
reachable by anyone else on the machine: it listens on no TCP port at all,
only on a Unix socket inside a directory that only its owner may enter (mode
0700). Another local user cannot even reach the socket; root and the owner
can. Postgres refuses to run as root, so as root the cluster runs as
`postgres`.

Two other set-ups ask every role for its password, so others may reach them:

- `auth="scram"`: scram-sha-256 on the socket (and on 127.0.0.1 with
  `tcp=True`), in a folder others may enter; the grader's own throwaway
  cluster, which sandboxed users log in to as their own roles;
- `auth="debian"`: what Debian's `pg_createcluster` makes (`initdb
  --auth-local=peer --auth-host=scram-sha-256`, the socket open to all, as
  in /var/run/postgresql) on 127.0.0.1: the stock server the grading tests
  run on. Its superuser logs in over TCP with `superuser_password`.
"""

from __future__ import annotations

import contextlib
import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import quote

import psycopg2

Auth = Literal["trust", "scram", "debian"]  # how the cluster takes logins (the list above)
AUTHS: tuple[Auth, ...] = get_args(Auth)


def find_bindir() -> Path | None:
    """Return the directory holding initdb and pg_ctl, or None when Postgres is absent."""
    on_path = shutil.which("pg_ctl")
    candidates = [str(Path(on_path).resolve().parent)] if on_path else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for directory in candidates:
        if (Path(directory) / "initdb").exists() and (Path(directory) / "pg_ctl").exists():
            return Path(directory)
    return None


def runuser() -> str:
    """util-linux's runuser, found where Debian puts it whatever PATH holds.

    A grader started from an empty environment (`sudo env -i PATH=/usr/bin:/bin`,
    as the GitHub Actions recipe does) has no /usr/sbin on its PATH.
    """
    for found in (shutil.which("runuser"), "/usr/sbin/runuser", "/sbin/runuser"):
        if found and Path(found).is_file():
            return found
    return "runuser"  # not installed: the command then fails saying so


def free_port() -> int:
    """Ask the kernel for a free TCP port on loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TempCluster:
    """One Postgres server in a temporary directory; start(), stop(), url()."""

    def __init__(
        self,
        bindir: Path,
        *,
        durable: bool = False,
        auth: Auth = "trust",
        tcp: bool = False,
        max_connections: int = 200,
        reaped: bool = True,
    ) -> None:
        if auth not in AUTHS:
            raise ValueError(f"auth {auth!r}: choose one of {', '.join(AUTHS)}")
        self.bindir = bindir
        # Tests trade durability for speed; the benchmark keeps Postgres's real commit cost.
        self.durable = durable
        self.auth = auth
        self.tcp = tcp or auth == "debian"
        self.max_connections = max_connections
        # Without TCP the number only names the socket file (.s.PGSQL.<port>).
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="koda-pg-"))
        self.root.chmod(0o700)  # mkdtemp's default, said out loud: the data lives here
        self._as_postgres = os.geteuid() == 0
        # Whoever kills this process (SIGKILL included), the server and its folder go too.
        self._reaper = self._start_reaper() if reaped else None
        self.socket_dir = self.root
        self.superuser_password = ""
        if auth != "trust":
            # Every role gives its password, so others may reach the socket (not list it).
            self.root.chmod(0o711)
            self.socket_dir = self.root / "socket"
            self.socket_dir.mkdir()
            self.socket_dir.chmod(0o755)  # whatever the umask: the grader's is 077
            self.superuser_password = secrets.token_urlsafe(18)
        self.datadir = self.root / "data"
        self.logfile = self.root / "server.log"
        password_file = self.root / "superuser-password"
        if self._as_postgres:
            for path in (self.root, self.socket_dir):
                shutil.chown(path, "postgres", "postgres")
        local, host = {
            # Trust is safe only behind the private directory; TCP is refused outright.
            "trust": ("trust", "reject"),
            "scram": ("scram-sha-256", "scram-sha-256"),
            "debian": ("peer", "scram-sha-256"),
        }[auth]
        options = [f"--auth-local={local}", f"--auth-host={host}"]
        if self.superuser_password:
            password_file.write_text(self.superuser_password + "\n", encoding="utf-8")
            password_file.chmod(0o600)
            if self._as_postgres:
                shutil.chown(password_file, "postgres", "postgres")
            options.append(f"--pwfile={password_file}")
        try:
            self._run(
                "initdb",
                "-D",
                str(self.datadir),
                "-U",
                "postgres",
                *options,
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            )
        finally:
            password_file.unlink(missing_ok=True)

    def _start_reaper(self) -> subprocess.Popen[bytes]:
        """labs.pg.reaper, in a session of its own, waiting for this process to end."""
        # By its file (it needs nothing but the standard library): whichever kit is installed.
        command = [
            sys.executable,
            "-I",
            str(Path(__file__).with_name("reaper.py")),
            str(os.getpid()),
        ]
        command += [str(self.root), str(self.bindir)]
        command += [runuser()] if self._as_postgres else []
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self._as_postgres:
            command = [runuser(), "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        listen = "127.0.0.1" if self.tcp else ""
        socket_mode = "0700" if self.auth == "trust" else "0777"
        options = (
            f"-p {self.port} -c listen_addresses='{listen}' -k {self.socket_dir} "
            f"-c unix_socket_permissions={socket_mode} -c max_connections={self.max_connections} "
            "-c password_encryption=scram-sha-256"
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

    def allow(self, line: str) -> None:
        """Put a line first in pg_hba.conf and have the server reread it (other set-ups' tests)."""
        hba = self.datadir / "pg_hba.conf"
        hba.write_text(line + "\n" + hba.read_text(encoding="utf-8"), encoding="utf-8")
        self._run("pg_ctl", "-D", str(self.datadir), "reload")

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
        """A URL for one database of this cluster, as its superuser.

        Through the socket, whose directory and port ride in the query
        (`?host=/dir&port=N`, a form SQLAlchemy, psycopg2, psql and pgbench
        all accept); over TCP with the password where the socket asks for
        the OS user's name (peer).
        """
        if self.auth == "debian":
            return self.tcp_url("postgres", self.superuser_password, database)
        login = "postgres" + (f":{self.superuser_password}" if self.superuser_password else "")
        return f"postgresql://{login}@/{database}?host={self.socket_dir}&port={self.port}"

    def tcp_url(self, role: str, password: str, database: str = "postgres") -> str:
        """A URL for one database over TCP on 127.0.0.1, as role (tcp=True only)."""
        login = f"{quote(role, safe='')}:{quote(password, safe='')}"
        return f"postgresql://{login}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database and return its URL."""
        with Autocommit(self.url()) as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        """Stop the server if it runs and delete its directory."""
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
        if self._reaper is not None:  # nothing left for it to do
            self._reaper.kill()
            self._reaper.wait()


class Autocommit:
    """A short-lived autocommit cursor: `with Autocommit(url) as cursor: ...`."""

    def __init__(self, url: str) -> None:
        self.connection = psycopg2.connect(url)
        self.connection.autocommit = True

    def __enter__(self) -> psycopg2.extensions.cursor:
        return self.connection.cursor()

    def __exit__(self, *exc: object) -> None:
        self.connection.close()
