"""What a submission may take, and which protections the machine gave it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

MiB = 1024 * 1024
# A submission's own scratch space, a tmpfs per command whose pages count against its memory
# cap: /tmp (and, without bwrap, /var/tmp) and /dev/shm, which needs room for multiprocessing's
# semaphores and a little shared memory.
TMP_SIZE = 64 * MiB
SHM_SIZE = 16 * MiB


@dataclass(frozen=True)
class Limits:
    """What one submission may take: per process (rlimits) and all its processes together."""

    cpu_seconds: int = 120
    address_space: int = 3072 * MiB  # per process, where a cgroup caps the whole
    fallback_address_space: int = 1536 * MiB  # per process, where no cgroup can be had
    memory: int = 1024 * MiB  # resident memory of all the submission's processes together
    processes: int = 128  # the submission's processes (and threads) together
    file_size: int = 256 * MiB
    output_bytes: int = 64 * 1024  # kept of each stream: half from its start, half from its end


class SandboxMode(StrEnum):
    """How a sandbox isolates a submission on this machine (modes.py says what each gives)."""

    BWRAP = "bwrap"
    UID = "uid"
    NONE = "none"


class Caps(StrEnum):
    """What caps a submission's memory and processes as a whole."""

    CGROUP = "cgroup"  # the kernel, for all its processes together
    RLIMITS = "rlimits"  # per-process limits, and the sandbox's watch over their sum


@dataclass(frozen=True)
class Isolation:
    """Which protections a sandbox gives on this machine (they depend on root and bwrap).

    mode is "bwrap" (own user where root, own PID, mount and network
    namespaces), "uid" (root without bwrap: a uid of its own, no network),
    or "none" (neither: grading refuses unless told --unsafe-no-sandbox).
    caps is "cgroup" (memory and processes capped for the submission as a
    whole by the kernel) or "rlimits" (per-process limits, and a watch that
    stops the submission when its processes together pass the caps).
    """

    mode: SandboxMode
    own_user: bool
    no_network: bool
    caps: Caps

    @property
    def namespaces(self) -> bool:
        """Whether the submission has PID and mount namespaces of its own."""
        return self.mode == SandboxMode.BWRAP

    def describe(self) -> str:
        """One line for a report, naming the mode first."""
        if self.mode == SandboxMode.NONE:
            return (
                "sandbox mode none: NO SANDBOX (--unsafe-no-sandbox): the learner's code runs "
                "with the grader's rights, sees its files and processes, and may outlive grading"
            )
        user = "a user of its own" if self.own_user else "the grader's user"
        where = (
            "its own PID, mount and network namespaces, seeing only its tree, "
            "the kit and Python, read-only"
            if self.namespaces
            else "no PID namespace (no working bwrap: apt-get install bubblewrap): other "
            "processes are in view; the network's and a mount namespace of its own, for "
            "its own /tmp, /var/tmp and /dev/shm"
        )
        network = "no network" if self.no_network else "network not isolated"
        caps = (
            "memory and processes capped as a whole (cgroup)"
            if self.caps == Caps.CGROUP
            else "memory and processes capped by rlimits and a watch"
        )
        return (
            f"sandbox mode {self.mode}: {user}; {where}; {network}; {caps}; "
            "private temp dir; minimal environment"
        )
