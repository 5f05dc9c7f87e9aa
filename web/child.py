"""A child process whose output is read through capped buffers, and which dies whole.

A learner's code can print without end (a loop around print, a traceback
in a loop); the dashboard keeps the first and the last part of what a child
wrote and counts what it left out, so memory stays bounded however much
comes. The child gets a process group of its own, so killing it also kills
whatever it started (the host that imports the tree).
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

# Each of stdout and stderr keeps at most this many bytes: half from the start, half from the end.
OUTPUT_LIMIT = 64 * 1024
CHUNK = 64 * 1024


class CappedBuffer:
    """The head and the tail of a byte stream, with the middle dropped past a limit."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        if limit < 2:
            raise ValueError(f"limit must be at least 2 bytes, not {limit}")
        self.limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0  # bytes left out between head and tail
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """How many bytes the buffer holds now (never more than limit)."""
        return len(self._head) + len(self._tail)

    def feed(self, data: bytes) -> None:
        """Take more output: the first limit/2 bytes stay, then only the newest limit/2."""
        with self._lock:
            room = self.limit // 2 - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            keep = self.limit - self.limit // 2
            if len(data) >= keep:
                self.dropped += len(self._tail) + len(data) - keep
                self._tail[:] = data[-keep:]
                return
            self._tail += data
            excess = len(self._tail) - keep
            if excess > 0:
                del self._tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        """Everything kept, as text, with a line saying how much was left out."""
        with self._lock:
            head, tail, dropped = bytes(self._head), bytes(self._tail), self.dropped
        said = head.decode("utf-8", "replace")
        if dropped:
            said += f"\n… {dropped} bytes of output left out …\n"
        return said + tail.decode("utf-8", "replace")


def drain(stream: IO[bytes], into: CappedBuffer) -> None:
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
        output_limit: int = OUTPUT_LIMIT,
    ) -> None:
        self.stdout = CappedBuffer(output_limit)
        self.stderr = CappedBuffer(output_limit)
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
