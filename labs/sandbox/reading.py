"""Reading a sandboxed command's output to its end or its timeout, through capped buffers."""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable

from labs.untrusted import CappedOutput, clean_text


def read_to_end(
    process: subprocess.Popen[bytes], timeout: float, cap: int, kill: Callable[[], None]
) -> tuple[int | None, str, str]:
    """(returncode or None at the timeout, stdout, stderr), cleaned; kill() ends what is left.

    When the command exits, whatever it left behind is killed at once, so the
    pipes reach their end even if a daemon kept a copy of them.
    """
    assert process.stdout is not None and process.stderr is not None
    outputs = {
        process.stdout.fileno(): CappedOutput(cap),
        process.stderr.fileno(): CappedOutput(cap),
    }
    returncode: int | None = None
    killed = False
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map() and time.monotonic() < deadline:
            if process.poll() is not None and returncode is None:
                returncode = process.returncode
                kill()
                killed = True
                deadline = min(deadline, time.monotonic() + 1.0)
            for key, _ in selector.select(timeout=max(0.0, min(0.2, deadline - time.monotonic()))):
                chunk = os.read(key.fd, 65536)
                if chunk:
                    outputs[key.fd].feed(chunk)
                else:
                    selector.unregister(key.fileobj)
    if returncode is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            returncode = process.wait(timeout=max(0.0, deadline - time.monotonic()))
    if not killed:
        kill()
    process.wait()
    process.stdout.close()
    process.stderr.close()
    out, err = (clean_text(output.text(), keep_newlines=True) for output in outputs.values())
    return returncode, out, err
