"""The run state machine: data plus one small function, no I/O."""

from collections.abc import Mapping
from enum import StrEnum

from . import errors


class RunStatus(StrEnum):
    """Where a run is in its life. The gateway writes pending; workers write the rest."""

    PENDING = "pending"
    RUNNING = "running"
    STREAMING = "streaming"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL: frozenset[RunStatus] = frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED})

# TODO(check 4): list, for each status, the statuses a run may move to next.
# As shipped, every move is allowed: nothing stops done -> running.
ALLOWED: Mapping[RunStatus, frozenset[RunStatus]] = {
    status: frozenset(RunStatus) for status in RunStatus
}
# END(check 4)


def can_transition(current: RunStatus, target: RunStatus) -> bool:
    """Say whether the allowlist has an edge from current to target (not listed: refused)."""
    return target in ALLOWED.get(current, frozenset())


def ensure_transition(run_id: str, current: RunStatus, target: RunStatus) -> None:
    """Raise IllegalTransitionError, naming both states, unless the move is allowed."""
    if not can_transition(current, target):
        raise errors.IllegalTransitionError(run_id, current, target)
