"""Finding the processes a test started, by a mark on their command line."""

from __future__ import annotations

import os
import time


def marked(mark: str) -> list[int]:
    """The live processes whose command line carries mark."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if mark.encode() in cmdline.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def started(mark: str, seconds: float = 60) -> list[int]:
    """The processes carrying mark, once there is one (empty if none came within seconds).

    Generous on purpose: a loaded machine may take many seconds to start a
    sandboxed interpreter, and what the caller tests is what follows.
    """
    deadline = time.monotonic() + seconds
    while not (found := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found
