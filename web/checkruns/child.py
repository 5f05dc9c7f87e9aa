"""A child process whose output is read through capped buffers, and which dies whole.

A learner's code can print without end (a loop around print, a traceback
in a loop); the dashboard keeps the first and the last part of what a child
wrote and counts what it left out (labs.untrusted.CappedOutput, the kit's
own), so memory stays bounded however much comes. The child gets a process
group of its own, so killing it also kills whatever it started (the host
that imports the tree).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from labs.untrusted import CappedOutput

CHUNK = 64 * 1024


def drain(stream: IO[bytes], into: CappedOutput) -> None:
    """Read a pipe to its end into a capped buffer (a thread's job, so the child never blocks)."""
    with stream:
        # os.read returns whatever is there (up to CHUNK) instead of waiting for a full chunk.
        while chunk := os.read(stream.fileno(), CHUNK):
            into.feed(chunk)


class Child:
    """A running child process, its output capped, killable with everything it started."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        output_limit: int = 64 * 1024,
    ) -> None:
        self.stdout = CappedOutput(output_limit)
        self.stderr = CappedOutput(output_limit)
        self.process = subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: kill() reaches its children too
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [
            threading.Thread(target=drain, args=(pipe, buffer), daemon=True)
            for pipe, buffer in (
                (self.process.stdout, self.stdout),
                (self.process.stderr, self.stderr),
            )
        ]
        for reader in self._readers:
            reader.start()

    def wait(self, timeout: float) -> int | None:
        """The exit code once the child ended, or None if it still runs after timeout seconds."""
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """Kill the child's whole process group, and reap the child."""
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def finish(self) -> int:
        """Wait for the output to be read to its end; return the exit code (the child has ended)."""
        code = self.process.wait()
        for reader in self._readers:
            reader.join(timeout=5)
        return code
