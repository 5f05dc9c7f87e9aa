"""A cgroup per submission: its memory and its processes capped as a whole by the kernel.

Per-process rlimits let three children under a 3 GB address-space limit take
6 GB together; a cgroup counts them all. Root can have one: on cgroup v1
(this project's test machines) a `pids` and a `memory` group made under the
grader's own; on cgroup v2 (GitHub's runners, systemd) a group under the
root of the hierarchy, where systemd enables both controllers. The
trampoline writes its own pid into the groups' `cgroup.procs` before it
drops its rights, so everything the submission starts is counted.

`tripped()` says why the kernel stepped in (the OOM killer ran in the group,
or a fork was refused at the cap), which the sandbox reports and answers by
stopping the whole submission.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

from .limits import Limits

ROOT = Path("/sys/fs/cgroup")


def own_path(controller: str) -> str | None:
    """This process's cgroup path for a v1 controller ("" for v2's unified line)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return None


def counter(path: Path, name: str) -> int:
    """The number after `name` in a flat keyed cgroup file (memory.events, pids.events)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                return int(value)
    return 0


class Cgroup:
    """A cgroup (v1: a pair of them) of one submission's own, with its caps written."""

    def __init__(self, memory: Path, pids: Path, limits: Limits, version: int) -> None:
        self.memory, self.pids, self.limits, self.version = memory, pids, limits, version

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        """A new cgroup for a submission, or None where this process cannot make one."""
        if os.geteuid() != 0:
            return None
        name = f"lab-sandbox-{secrets.token_hex(6)}"
        try:
            if (ROOT / "memory").is_dir() and (ROOT / "pids").is_dir():
                memory_path, pids_path = own_path("memory"), own_path("pids")
                if memory_path is None or pids_path is None:
                    return None
                memory = ROOT / "memory" / memory_path.lstrip("/") / name
                pids = ROOT / "pids" / pids_path.lstrip("/") / name
                group = cls(memory, pids, limits, 1)
            elif {"memory", "pids"} <= set(controllers()):
                group = cls(ROOT / name, ROOT / name, limits, 2)
            else:
                return None
            group.make()
        except OSError:
            return None
        return group

    def make(self) -> None:
        """Make the folders and write the caps (a failure leaves nothing behind)."""
        try:
            for folder in {self.memory, self.pids}:
                folder.mkdir()
            if self.version == 1:
                (self.memory / "memory.limit_in_bytes").write_text(str(self.limits.memory))
                swap = self.memory / "memory.memsw.limit_in_bytes"
                if swap.exists():  # memory and swap together: no way around the cap
                    swap.write_text(str(self.limits.memory))
            else:
                (self.memory / "memory.max").write_text(str(self.limits.memory))
                for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                    with contextlib.suppress(OSError):  # without swap accounting, no swap.max
                        (self.memory / name).write_text(value)
            (self.pids / "pids.max").write_text(str(self.limits.processes))
        except OSError:
            self.remove()
            raise

    @property
    def procs_files(self) -> list[str]:
        """The files the trampoline writes its pid into, joining the group."""
        return sorted({str(self.memory / "cgroup.procs"), str(self.pids / "cgroup.procs")})

    def tripped(self) -> str:
        """Why the kernel stepped in, or "": the OOM killer, or a fork refused at the cap."""
        events = "memory.oom_control" if self.version == 1 else "memory.events"
        if counter(self.memory / events, "oom_kill"):
            return (
                f"its processes together used more than {self.limits.memory // 2**20} MB "
                "of memory (the cap for a submission as a whole)"
            )
        if counter(self.pids / "pids.events", "max"):
            return (
                f"it tried to run more than {self.limits.processes} processes or threads "
                "at once (the cap for a submission as a whole)"
            )
        return ""

    def members(self) -> list[int]:
        """The pids in the group now."""
        with contextlib.suppress(OSError, ValueError):
            text = (self.pids / "cgroup.procs").read_text(encoding="utf-8")
            return [int(pid) for pid in text.split()]
        return []

    def kill(self) -> None:
        """SIGKILL every process in the group, until none is left."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.pids / "cgroup.kill").write_text("1")
        for _ in range(100):
            members = self.members()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        """Remove the folders (the group must be empty: kill() first)."""
        for folder in {self.memory, self.pids}:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def controllers() -> list[str]:
    """The controllers cgroup v2's root enables for its children (empty without v2)."""
    with contextlib.suppress(OSError):
        return (ROOT / "cgroup.subtree_control").read_text(encoding="utf-8").split()
    return []
