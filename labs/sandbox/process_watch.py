"""The watch where no cgroup can be had: what a submission's processes hold, added up.

Without a cgroup the kernel caps each process (rlimits), not the
submission: three children under the address-space limit may hold three
times the memory. So the sandbox looks, ten times a second, at every process
that descends from the ones it started (bwrap's namespace keeps daemons among
them) and every process of its uid, and stops the submission when their
number reaches the process cap or their resident memory passes the memory cap.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

from .limits import Limits

PAGE = os.sysconf("SC_PAGE_SIZE")


def process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, owner uid) for every live process (zombies left out)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            owner = entry.stat(follow_symlinks=False).st_uid
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as stat:
                fields = stat.read().rpartition(")")[2].split()
            if fields[0] != "Z":
                table[int(entry.name)] = (int(fields[1]), owner)
    return table


def members(roots: Iterable[int], uid: int | None) -> set[int]:
    """The processes descending from roots, and every process of uid."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found = {pid for pid, (_, owner) in table.items() if uid is not None and owner == uid}
    descendants: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid not in descendants:
            descendants.add(pid)
            stack.extend(children.get(pid, []))
    return found | descendants


def resident(pid: int) -> int:
    """The resident memory of one process, in bytes (0 when it is gone)."""
    with (
        contextlib.suppress(OSError, ValueError, IndexError),
        open(f"/proc/{pid}/statm", encoding="ascii") as statm,
    ):
        return int(statm.read().split()[1]) * PAGE
    return 0


def over_caps(roots: list[int], uid: int | None, limits: Limits) -> str:
    """Why the submission must stop (processes or memory past its cap), or ""."""
    if not roots and uid is None:
        return ""
    pids = members(roots, uid)
    if len(pids) >= limits.processes:
        return (
            f"it tried to run more than {limits.processes} processes at once "
            "(the cap for a submission as a whole)"
        )
    held = sum(resident(pid) for pid in pids)
    if held > limits.memory:
        return (
            f"its processes together used more than {limits.memory // 2**20} MB of memory "
            "(the cap for a submission as a whole)"
        )
    return ""
