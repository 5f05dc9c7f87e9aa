"""The sandboxed launcher: the tree host (`python -m labs.host ...`) started in a Sandbox.

It fits the launcher contract of labs.launch (see /work/interfaces.md A):
`launch(spec)` copies `spec.tree` into a new sandbox and execs the host
there with two pipes, one for requests and one for answers; the returned
host has `requests`, `answers`, `pid`, `kill()` (the host and everything it
started, then the sandbox) and `stderr_tail()` (capped, cleaned text).

Until labs.launch exists, `HostSpecLike` stands for its HostSpec; once it
does, the harness passes `launcher=SandboxedLauncher()` to run_checks and
isolate.check_outcomes stops starting the probe (see grading/isolate.py).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO, Protocol

from .sandbox import Limits, Sandbox, url_needs_network
from .untrusted import CappedOutput


class HostSpecLike(Protocol):
    """What a launcher is asked to start (labs.launch.HostSpec has these fields)."""

    @property
    def tree(self) -> Path: ...
    @property
    def store(self) -> str: ...
    @property
    def database_url(self) -> str | None: ...
    @property
    def schema(self) -> str | None: ...


class SandboxedHost:
    """A tree host running in a sandbox: its pipes, its capped stderr, and a kill for all of it."""

    def __init__(
        self, process: subprocess.Popen[bytes], requests: BinaryIO, answers: BinaryIO, box: Sandbox
    ) -> None:
        self.process, self.requests, self.answers, self.box = process, requests, answers, box
        self.pid = process.pid
        self._stderr = CappedOutput(box.limits.output_bytes)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := os.read(stream.fileno(), 65536):
            self._stderr.feed(chunk)

    def stderr_tail(self) -> str:
        """The end of what the host wrote to stderr: capped, cleaned, untrusted."""
        return self._stderr.text()[-4000:]

    def kill(self) -> None:
        """Kill the host and everything it started, then free the sandbox."""
        for stream in (self.requests, self.answers):
            with contextlib.suppress(OSError):
                stream.close()
        self.box.close()
        self.process.wait()
        self._reader.join(timeout=2)
        if self.process.stderr is not None and not self._reader.is_alive():
            self.process.stderr.close()


class SandboxedLauncher:
    """Starts the tree host (`python -m labs.host ...`) in a sandbox of its own per launch.

    It fits labs.launch.Launcher: launch(HostSpec) -> a host process with
    requests/answers pipes, kill(), stderr_tail() and pid. The host is exec'd
    by the sandbox's trampoline, so the process on the pipes is the host itself.
    """

    def __init__(self, limits: Limits | None = None, *, module: str = "labs.host") -> None:
        self.limits = limits
        self.module = module

    def launch(self, request: HostSpecLike) -> SandboxedHost:
        """Copy the tree into a new sandbox and start the host there on two pipes."""
        url = request.database_url
        box = Sandbox(self.limits, network=bool(url) and url_needs_network(url or ""))
        to_host, from_grader = os.pipe()  # requests: the grader writes, the host reads
        from_host, to_grader = os.pipe()  # answers: the host writes, the grader reads
        try:
            tree = box.share(Path(request.tree), Path(request.tree).name)
            command = [sys.executable, "-m", self.module, "--tree", str(tree)]
            command += ["--store", request.store]
            command += ["--database-url", url] if url else []
            command += ["--schema", request.schema] if request.schema else []
            command += ["--requests-fd", str(to_host), "--answers-fd", str(to_grader)]
            env = {"DATABASE_URL": url} if url else {}
            env |= {"DB_SCHEMA": request.schema} if request.schema else {}
            process = box.popen(
                command, env=env, pass_fds=(to_host, to_grader), stdout=subprocess.DEVNULL
            )
        except BaseException:
            box.close()
            os.close(from_grader)
            os.close(from_host)
            raise
        finally:
            os.close(to_host)  # the host's ends live on in the host only
            os.close(to_grader)
        return SandboxedHost(process, os.fdopen(from_grader, "wb"), os.fdopen(from_host, "rb"), box)
