"""Starting a tree host: the child process that imports a learner's tree and answers the driver.

The launchers here, and the sandboxed one in labs/sandbox/launcher.py, are
labs.checking.protocol.Launcher: `launch(spec)` returns a HostProcess (a
labs.checking.pipes.PipeHost for all of them).

    ForkLauncher()      the default where os.fork exists: forks the driver (which
                        never imports the tree). The first fork of a process is
                        cold: the host imports flask, sqlmodel and the tree while
                        the driver imports the checks. Later forks (restarts,
                        more trees) come from a driver that has imported the
                        libraries, so they start in milliseconds. prestart(spec) forks a
                        host now for the next launch(spec) (SELFTEST uses it).
                        Only for single-threaded programs (the CLI, a grader):
                        a forked child of a threaded server could inherit a lock
                        another thread held.
    ExecLauncher(python=sys.executable, prefix=(), env=None, cwd=None,
                 preexec_fn=None, extra_popen={})
        execs `prefix + host_command(spec, requests_fd, answers_fd, python)`,
        i.e. `python -m labs.checking.host --tree PATH --store S --package NAME
        [--database-url-fd K] [--schema NAME] --requests-fd N --answers-fd M`,
        the database URL (with its password) on an inherited pipe, never on
        the command line another user reads in /proc,
        in a new session (its own process group), stdout and stderr to the
        capped pipe. A sandbox wraps it with `prefix`, `env` (PYTHONPATH gets
        the kit's root prepended), `preexec_fn` (rlimits) and `extra_popen`;
        the dashboard uses it as it is.

The driver's side: labs.checking.runner.run_checks(tree, store, *, launcher=, seed=,
check_timeout=, database_url=, only=, extra=, on_result=) -> Report.
"""

from __future__ import annotations

import contextlib
import gc
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .libraries import preimport_libraries
from .pipes import PipeHost
from .protocol import HostProcess, HostSpec, Launcher

HOST_MODULE = "labs.checking.host"


def credentials_pipe(secret: str) -> int:
    """The read end of a pipe holding secret and nothing more, for a child to inherit and read."""
    read, write = os.pipe()
    try:
        os.write(write, secret.encode())  # a URL: far below the pipe's buffer
    finally:
        os.close(write)
    return read


def host_command(
    spec: HostSpec,
    requests_fd: int,
    answers_fd: int,
    python: str = sys.executable,
    url_fd: int | None = None,
) -> list[str]:
    """The command line of an exec'd host; its database URL comes on url_fd (credentials_pipe)."""
    command = [python, "-m", HOST_MODULE, "--tree", str(spec.tree), "--store", str(spec.store)]
    if spec.package:
        command += ["--package", spec.package]
    if spec.database_url:
        if url_fd is None:
            raise ValueError("a host's database URL goes on a pipe (url_fd), never on its argv")
        command += ["--database-url-fd", str(url_fd)]
    if spec.schema:
        command += ["--schema", spec.schema]
    return [*command, "--requests-fd", str(requests_fd), "--answers-fd", str(answers_fd)]


def _close_all_but(*keep: int) -> None:
    """Close every inherited fd but 0, 1, 2 and keep: the driver's sockets stay its own."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 65536)


class ForkLauncher:
    """Fork the driver into a host, which imports the tree (never the driver).

    The first host of a process is forked at once and imports the libraries
    itself, while the driver goes on importing the checks: the two overlap.
    Before any later fork (a restart after a hung check, the next tree to
    grade) the driver imports the libraries once, so those hosts start warm.
    """

    forked = False  # has this process forked a host before?

    def __init__(self) -> None:
        self._started: dict[HostSpec, HostProcess] = {}

    def prestart(self, request: HostSpec) -> None:
        """Fork a host now, for the next launch(request): it imports while the driver does."""
        self._started[request] = self.launch(request)

    def launch(self, request: HostSpec) -> HostProcess:
        """Fork; the child becomes the host of request.tree in its own process group."""
        if request in self._started:
            return self._started.pop(request)
        if ForkLauncher.forked:
            preimport_libraries(request.store)
        ForkLauncher.forked = True
        requests_r, requests_w = os.pipe()
        answers_r, answers_w = os.pipe()
        output_r, output_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the host
            code = 70
            try:
                gc.freeze()  # the inherited heap is never collected: no copy-on-write storms
                os.setpgid(0, 0)
                _close_all_but(requests_r, answers_w, output_w)
                from .host import serve

                code = serve(request, requests_r, answers_w, output_fd=output_w)
            finally:
                os._exit(code)
        with contextlib.suppress(PermissionError, ProcessLookupError):
            os.setpgid(pid, pid)  # either side may win the race to set it
        for fd in (requests_r, answers_w, output_w):
            os.close(fd)
        return PipeHost(pid, requests_w, answers_r, output_r, kill_group=True)


@dataclass
class ExecLauncher:
    """Exec `python -m labs.checking.host ...` (behind an optional prefix) in a new session."""

    python: str = sys.executable
    prefix: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    preexec_fn: Callable[[], None] | None = None
    extra_popen: dict[str, Any] = field(default_factory=dict)

    def launch(self, request: HostSpec) -> HostProcess:
        """Start the host with its requests and answers on inherited pipe fds."""
        requests_r, requests_w = os.pipe()
        answers_r, answers_w = os.pipe()
        output_r, output_w = os.pipe()
        url_fd = credentials_pipe(request.database_url) if request.database_url else None
        passed = (requests_r, answers_w) if url_fd is None else (requests_r, answers_w, url_fd)
        command = [
            *self.prefix,
            *host_command(request, requests_r, answers_w, self.python, url_fd),
        ]
        env = dict(os.environ if self.env is None else self.env)
        repo = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=passed,
                start_new_session=True,
                env=env,
                cwd=self.cwd,
                preexec_fn=self.preexec_fn,
                **self.extra_popen,
            )
        finally:
            for fd in (*passed, output_w):
                os.close(fd)
        return PipeHost(popen.pid, requests_w, answers_r, output_r, kill_group=True, popen=popen)


def default_launcher() -> Launcher:
    """The fork launcher where the system has fork, else the exec launcher."""
    return ForkLauncher() if hasattr(os, "fork") else ExecLauncher()
