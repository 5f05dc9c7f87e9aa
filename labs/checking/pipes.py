"""A host reached through three pipes: requests out, answers in, and its own output kept capped.

PipeHost(pid, requests_fd, answers_fd, output_fd, kill_group=True, popen=None)
    the HostProcess of any launcher that gives the host three pipes:
    requests (driver -> host), answers (host -> driver), and the host's fd 1
    and 2 (read through a capped buffer, never copied to the terminal).
    Besides the whole output, it keeps what came since the driver last
    called mark_output(): what the tree printed during one check.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import time
from typing import Any

from labs.untrusted import CappedOutput

from .errors import HostGoneError, HostProtocolError, HostTimeoutError

OUTPUT_CAP = 8192  # bytes of the host's own output kept: the first and the last 4 KiB
TAIL = 4096  # of which a failure's message quotes the end
LINE_CAP = 4 * 1024 * 1024  # an answer line longer than this is a protocol error
# The stacks the host prints (faulthandler) when a request runs late: the kit's, not the tree's.
STACKS = re.compile(
    r"^(?:Current thread|Thread) 0x[0-9a-f]+ \(most recent call first\):\n(?:  .*\n?)*\n?",
    re.M,
)


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
        self._kept = CappedOutput(OUTPUT_CAP)
        self._since_mark = CappedOutput(OUTPUT_CAP)
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
            raise HostGoneError(f"the host stopped reading requests ({error})") from error

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
                raise HostTimeoutError(f"no answer within {timeout:g} s")
            watched = [self._answers] + ([self._output] if self._output >= 0 else [])
            ready, _, _ = select.select(watched, [], [], min(left, 3600.0))
            if self._output in ready:
                self._drain_output()
            if self._answers in ready:
                chunk = _read(self._answers)
                if not chunk:
                    self._drain_output()
                    raise HostGoneError("the host exited")
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
            self._kept.feed(chunk)
            self._since_mark.feed(chunk)

    def stderr_tail(self) -> str:
        """The end of what the host printed, as text (untrusted: print it cleaned)."""
        self._drain_output()
        return self._kept.last(TAIL)

    def mark_output(self) -> None:
        """Start keeping the host's output afresh: output_since_mark() is what comes next."""
        self._drain_output()
        self._since_mark = CappedOutput(OUTPUT_CAP)

    def output_since_mark(self) -> str:
        """What the tree printed since mark_output(), its stacks left out (untrusted text).

        Read after the last answer of a check: the tree wrote its output
        before that answer, so all of it is in the pipe by then.
        """
        self._drain_output()
        return STACKS.sub("", self._since_mark.text())

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
