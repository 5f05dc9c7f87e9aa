"""Starting a tree host: the child process that imports a learner's tree and answers the driver.

The API, for launchers of every kind (the local one here, a sandboxed one in
labs/sandbox/box.py):

    HostSpec(tree: Path, store: "memory" | "postgres", database_url: str | None,
             schema: str | None, package: str)          frozen, hashable
        what to host. `package` is the name the tree is imported under
        (trees.package_for(root)); `schema` the Postgres schema of its tables.
    host_spec(tree, package, store, database_url, schema) -> HostSpec
        the spec the driver uses: schema defaults to $DB_SCHEMA on Postgres,
        else the package.

    Launcher (Protocol):  launch(spec: HostSpec) -> HostProcess

    HostProcess (Protocol):
        pid: int
        send(message: dict) -> None            one request, as one JSON line
        receive(timeout: float) -> dict        the next answer; raises HostTimeout,
                                               HostGone (EOF, the host died) or
                                               HostProtocolError (not a JSON object)
        kill() -> None                         the host and everything it started
        stderr_tail() -> str                   the host's stdout+stderr, last 4 KiB,
                                               untrusted text

    PipeHost(pid, requests_fd, answers_fd, output_fd, kill_group=True, popen=None)
        the HostProcess of any launcher that gives the host three pipes:
        requests (driver -> host), answers (host -> driver), and the host's fd 1
        and 2 (read through a capped buffer, never copied to the terminal).

    ForkLauncher()      the default where os.fork exists: forks the driver (which
                        never imports the tree). The first fork of a process is
                        cold: the host imports flask, sqlmodel and the tree while
                        the driver imports the checks. Later forks (restarts,
                        more trees) come from a driver that has imported the
                        libraries, so they start in milliseconds. prestart(spec) forks a
                        host now for the next launch(spec) (SELFTEST uses it).
    ExecLauncher(python=sys.executable, prefix=(), env=None, cwd=None,
                 preexec_fn=None, extra_popen={})
        execs `prefix + host_command(spec, requests_fd, answers_fd, python)`,
        i.e. `python -m labs.checking.host --tree PATH --store S --package NAME
        [--database-url URL] [--schema NAME] --requests-fd N --answers-fd M`,
        in a new session (its own process group), stdout and stderr to the
        capped pipe. A sandbox wraps it with `prefix`, `env` (PYTHONPATH gets
        the kit's root prepended), `preexec_fn` (rlimits) and `extra_popen`.

The driver's side: labs.checking.runner.run_checks(tree, store, *, launcher=, seed=,
check_timeout=, database_url=, only=, extra=, on_result=) -> Report.

The protocol itself is described in labs/checking/host.py.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

OUTPUT_CAP = 4096  # bytes of the host's own output kept for a failure's message
LINE_CAP = 4 * 1024 * 1024  # an answer line longer than this is a protocol error


class HostError(Exception):
    """The host could not answer."""


class HostTimeout(HostError):
    """No answer within the time allowed."""


class HostGone(HostError):
    """The host closed its answers pipe: it exited or was killed."""


class HostProtocolError(HostError):
    """The host wrote something that is not an answer."""


@dataclass(frozen=True)
class HostSpec:
    """What a host should import and which store it should open."""

    tree: Path
    store: str = "memory"  # "memory" or "postgres"
    database_url: str | None = None
    schema: str | None = None
    package: str = ""


class HostProcess(Protocol):
    """A running host, as the driver talks to it."""

    pid: int

    def send(self, message: dict[str, Any]) -> None: ...

    def receive(self, timeout: float) -> dict[str, Any]: ...

    def kill(self) -> None: ...

    def stderr_tail(self) -> str: ...


class Launcher(Protocol):
    """Something that starts hosts."""

    def launch(self, request: HostSpec) -> HostProcess: ...


def host_spec(
    tree: Path, package: str, store: str, database_url: str | None, schema: str | None
) -> HostSpec:
    """A tree's host spec; the schema defaults to $DB_SCHEMA on Postgres, else the package."""
    if store == "postgres" and not schema:
        schema = os.environ.get("DB_SCHEMA") or None
    return HostSpec(tree, store, database_url, schema or package, package)


def host_command(
    spec: HostSpec, requests_fd: int, answers_fd: int, python: str = sys.executable
) -> list[str]:
    """The command line of an exec'd host."""
    command = [python, "-m", "labs.checking.host", "--tree", str(spec.tree), "--store", spec.store]
    if spec.package:
        command += ["--package", spec.package]
    if spec.database_url:
        command += ["--database-url", spec.database_url]
    if spec.schema:
        command += ["--schema", spec.schema]
    return [*command, "--requests-fd", str(requests_fd), "--answers-fd", str(answers_fd)]


class PipeHost:
    """A host reached through pipes: JSON lines out, JSON lines in, its output kept capped."""

    def __init__(
        self,
        pid: int,
        requests_fd: int,
        answers_fd: int,
        output_fd: int,
        *,
        kill_group: bool = True,
        popen: subprocess.Popen[bytes] | None = None,
    ) -> None:
        self.pid = pid
        self._requests = requests_fd
        self._answers = answers_fd
        self._output = output_fd
        self._kill_group = kill_group
        self._popen = popen
        self._pending = b""
        self._tail = b""
        self._dead = False
        for fd in (answers_fd, output_fd):
            os.set_blocking(fd, False)

    def send(self, message: dict[str, Any]) -> None:
        """Write one request line; a host that stopped reading is gone."""
        data = (json.dumps(message) + "\n").encode()
        try:
            while data:
                written = os.write(self._requests, data)
                data = data[written:]
        except (BrokenPipeError, OSError) as error:
            raise HostGone(f"the host stopped reading requests ({error})") from error

    def receive(self, timeout: float) -> dict[str, Any]:
        """Return the next answer line as a dict, draining the host's output meanwhile."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            line, newline, rest = self._pending.partition(b"\n")
            if newline:
                self._pending = rest
                return _decode(line)
            if len(self._pending) > LINE_CAP:
                raise HostProtocolError("an answer line longer than 4 MiB")
            left = deadline - time.monotonic()
            if left <= 0:
                raise HostTimeout(f"no answer within {timeout:g} s")
            watched = [self._answers] + ([self._output] if self._output >= 0 else [])
            ready, _, _ = select.select(watched, [], [], min(left, 3600.0))
            if self._output in ready:
                self._drain_output()
            if self._answers in ready:
                chunk = _read(self._answers)
                if not chunk:
                    self._drain_output()
                    raise HostGone("the host exited")
                self._pending += chunk

    def _drain_output(self) -> None:
        while self._output >= 0:
            chunk = _read(self._output)
            if chunk is None:
                return
            if not chunk:
                os.close(self._output)
                self._output = -1
                return
            self._tail = (self._tail + chunk)[-OUTPUT_CAP:]

    def stderr_tail(self) -> str:
        """The end of what the host printed, as text (untrusted: print it sanitized)."""
        self._drain_output()
        return self._tail.decode("utf-8", "replace")

    def kill(self) -> None:
        """Kill the host's process group (or the host alone) and reap it."""
        if self._dead:
            return
        self._dead = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self._kill_group:
                os.killpg(self.pid, signal.SIGKILL)
            else:
                os.kill(self.pid, signal.SIGKILL)
        if self._popen is not None:
            self._popen.wait()
        else:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        self._drain_output()
        for fd in (self._requests, self._answers, self._output):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._output = -1

    def close(self) -> None:
        """Ask the host to stop by closing its requests pipe, then make sure it has."""
        with contextlib.suppress(OSError):
            os.close(self._requests)
        self._requests = -1
        self.kill()


def _close_all_but(*keep: int) -> None:
    """Close every inherited fd but 0, 1, 2 and keep: the driver's sockets stay its own."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 65536)


def _read(fd: int) -> bytes | None:
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


def _decode(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        raise HostProtocolError(f"not a JSON answer: {line[:80]!r}") from None
    if not isinstance(message, dict):
        raise HostProtocolError(f"not a JSON object: {line[:80]!r}")
    return message


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
        command = [*self.prefix, *host_command(request, requests_r, answers_w, self.python)]
        env = dict(os.environ if self.env is None else self.env)
        repo = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        try:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                pass_fds=(requests_r, answers_w),
                start_new_session=True,
                env=env,
                cwd=self.cwd,
                preexec_fn=self.preexec_fn,
                **self.extra_popen,
            )
        finally:
            for fd in (requests_r, answers_w, output_w):
                os.close(fd)
        return PipeHost(popen.pid, requests_w, answers_r, output_r, kill_group=True, popen=popen)


def default_launcher() -> Launcher:
    """The fork launcher where the system has fork, else the exec launcher."""
    return ForkLauncher() if hasattr(os, "fork") else ExecLauncher()


def preimport_libraries(store: str = "memory") -> None:
    """Import what every tree imports (never the tree), so forked hosts start warm."""
    names = ["flask", "flask.testing", "pydantic", "sqlalchemy", "sqlmodel"]
    if store == "postgres":
        names += ["sqlalchemy.dialects.postgresql", "psycopg2"]
    for name in names:
        importlib.import_module(name)
