"""The hosts of one check run, which the run can kill from another thread.

The driver owns its hosts: it reads their pipes, kills and reaps them, all in
its own thread. When a run must end early (its time ran out, the dashboard is
shutting down), another thread ends it: RunHosts.stop() sends SIGKILL to each
host's process group and starts no more, and the driver, reading the pipe of
a host that died, sees it end at once and cleans up after it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Any

from labs.checking.api import HostProcess, HostSpec, Launcher


class RunStoppedError(Exception):
    """The run was stopped (its time ran out, the dashboard is shutting down): no more checks."""


class RunHost:
    """One host of a run, which the run can kill from another thread (RunHosts.stop)."""

    def __init__(self, process: HostProcess, hosts: RunHosts) -> None:
        self.process = process
        self.pid = process.pid
        self._hosts = hosts
        self.ended = False  # killed by its driver: its process is reaped, its pid may be reused

    def send(self, message: dict[str, Any]) -> None:
        """One request, as one JSON line."""
        self.process.send(message)

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next answer."""
        return self.process.receive(timeout)

    def kill(self) -> None:
        """The driver's kill: the host and everything it started, reaped."""
        with self._hosts.lock:
            self.ended = True
        self.process.kill()

    def stderr_tail(self) -> str:
        """The end of what the host printed."""
        return self.process.stderr_tail()

    def mark_output(self) -> None:
        """Start keeping the host's output afresh."""
        self.process.mark_output()

    def output_since_mark(self) -> str:
        """What the tree printed since mark_output()."""
        return self.process.output_since_mark()


class RunHosts:
    """The launcher of one run: execs its hosts, and kills them all when the run is stopped.

    stop() only sends the signal; the driver, reading a pipe of the killed host,
    sees it end at once and reaps it in its own thread, which owns the pipes.
    """

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.lock = threading.Lock()
        self.stopped = False
        self._hosts: list[RunHost] = []

    def launch(self, request: HostSpec) -> HostProcess:
        """Start a host, unless the run was stopped."""
        with self.lock:
            if self.stopped:
                raise RunStoppedError
            host = RunHost(self.launcher.launch(request), self)
            self._hosts.append(host)
        return host

    def stop(self) -> None:
        """Kill every host still running (with all it started), and start no more."""
        with self.lock:
            self.stopped = True
            for host in self._hosts:
                if not host.ended:  # not reaped yet: its process group is still its own
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(host.pid, signal.SIGKILL)
