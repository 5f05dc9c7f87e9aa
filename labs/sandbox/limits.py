"""What a sandboxed process may take, and which protections the machine gave it."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one sandboxed process may take."""

    cpu_seconds: int = 120
    address_space: int = 3072 * MiB
    file_size: int = 256 * MiB
    processes: int = 128  # per slot uid: the submission's processes together
    output_bytes: int = 64 * 1024  # kept of each stream: half from its start, half from its end


@dataclass(frozen=True)
class Isolation:
    """Which protections applied: they depend on the machine (root or not, namespaces)."""

    own_user: bool
    no_network: bool

    def describe(self) -> str:
        """One line for a report."""
        user = (
            "a user of its own (everything it starts is killed at the end)"
            if self.own_user
            else "the grader's user (process group only: a process that calls setsid can escape)"
        )
        network = "no network" if self.no_network else "network not isolated"
        return f"sandbox: {user}; {network}; rlimits; private temp dir; minimal environment"
