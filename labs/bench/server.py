"""The gateway under a production WSGI server: gunicorn, on a loopback port, for a while.

Used by the benchmark and by the reliability tests, which need real server
processes (several at once, on one database) rather than Flask's test client;
with a settings file (deploy/gunicorn.conf.py), it is the gateway as deployed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from labs.pg.cluster import free_port
from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT

from .httpclient import HttpConnection


class ServerStartError(Exception):
    """gunicorn exited or never answered /healthz; carries the end of its log."""


class GatewayServer:
    """gunicorn serving one WSGI app (gthread workers: threads plus keep-alive)."""

    def __init__(
        self,
        app: str,
        env: Mapping[str, str],
        *,
        workers: int = 2,
        threads: int = 8,
        port: int | None = None,
        graceful_stop: bool = True,
        config: Path | None = None,
        start_timeout: float = 30.0,
    ) -> None:
        self.app = app
        self.port = port or free_port()
        self.workers, self.threads = workers, threads
        # A settings file gives every other setting; without one, the bench's own below.
        self.config = config
        self.start_timeout = start_timeout
        # The server sees only the store chosen here, never a MOCK=1 or a DATABASE_URL left
        # in the shell.
        inherited = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DATABASE_URL")}
        self.env = inherited | dict(env)
        self.log = Path(tempfile.mkstemp(prefix="koda-gunicorn-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None
        # SIGTERM lets requests in flight finish (up to --graceful-timeout); SIGQUIT does not.
        self.stop_signal = signal.SIGTERM if graceful_stop else signal.SIGQUIT

    def command(self) -> list[str]:
        """The gunicorn command line."""
        if self.config is not None:
            settings = ["--config", str(self.config)]
        else:
            settings = ["--worker-class", "gthread", "--graceful-timeout", "5", "--timeout", "60"]
            settings += ["--keep-alive", "5"]
        return [
            sys.executable,
            "-m",
            "gunicorn",
            *settings,
            "--workers",
            str(self.workers),
            "--threads",
            str(self.threads),
            "--bind",
            f"127.0.0.1:{self.port}",
            self.app,
        ]

    def start(self, timeout: float | None = None) -> GatewayServer:
        """Start gunicorn and wait until every worker can answer /healthz."""
        self.launch()
        return self.wait_ready(timeout)

    def launch(self) -> GatewayServer:
        """Start gunicorn without waiting (start several servers at once, then wait_ready)."""
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(), cwd=REPO_ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        return self

    def wait_ready(self, timeout: float | None = None) -> GatewayServer:
        """Wait until every worker of a launched server can answer /healthz (by default for
        start_timeout seconds)."""
        assert self.process is not None, "launch() first"
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        while len(self.worker_pids()) < self.workers or not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise ServerStartError(
                    _("gunicorn {app} did not start:\n{log}").format(app=self.app, log=self.tail())
                )
            time.sleep(0.1)
        return self

    def _healthy(self) -> bool:
        connection = HttpConnection("127.0.0.1", self.port, timeout=2)
        try:
            return connection.request("GET", "/healthz").status == 200
        except OSError:
            return False
        finally:
            connection.close()

    def alive(self) -> bool:
        """True while the gunicorn master is running."""
        return self.process is not None and self.process.poll() is None

    def worker_pids(self) -> set[int]:
        """The master's worker processes, as Linux lists them."""
        if not self.alive():
            return set()
        assert self.process is not None
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return {int(pid) for pid in children.read_text().split()}
        except OSError:
            return set()

    def connect(self, timeout: float = 30.0) -> HttpConnection:
        """A keep-alive connection to this server."""
        return HttpConnection("127.0.0.1", self.port, timeout=timeout)

    def tail(self, lines: int = 30) -> str:
        """The last lines of gunicorn's log."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop (gracefully unless told otherwise), then firmly if it hangs; remove the log."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.unlink(missing_ok=True)

    def __enter__(self) -> GatewayServer:
        return self.start() if self.process is None else self.wait_ready()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
