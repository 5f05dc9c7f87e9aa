"""The lesson's run state machine: its statuses, the moves it allows, and a way to each status.

Defined once, here: the checks judge every tree by it, the dashboard draws
it and offers its moves, and the release keeps it (the learners' copy has no
solution). tests/grading/test_release.py checks that the solution's own
allowlist says the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class RunStatus(StrEnum):
    """Where a run is in its life, as the lesson names it (the trees teach the same enum).

    A StrEnum, so a status a tree answers as text compares equal to its member.
    """

    PENDING = "pending"
    RUNNING = "running"
    STREAMING = "streaming"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Every status in the order of a run's life.
STATUSES: tuple[RunStatus, ...] = tuple(RunStatus)

# The moves a run may make; every other move is refused with an error naming both states.
# Keyed by text as well as by member: a status read back from a tree is a plain str.
LESSON_MOVES: Mapping[str, frozenset[str]] = {
    RunStatus.PENDING: frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED}),
    RunStatus.RUNNING: frozenset(
        {RunStatus.STREAMING, RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED}
    ),
    RunStatus.STREAMING: frozenset({RunStatus.DONE, RunStatus.FAILED, RunStatus.CANCELLED}),
    RunStatus.DONE: frozenset(),
    RunStatus.FAILED: frozenset(),
    RunStatus.CANCELLED: frozenset(),
}

# How a new (pending) run is brought to each status by moves the lesson allows.
PATHS: Mapping[str, tuple[tuple[RunStatus, RunStatus], ...]] = {
    RunStatus.PENDING: (),
    RunStatus.RUNNING: ((RunStatus.PENDING, RunStatus.RUNNING),),
    RunStatus.STREAMING: (
        (RunStatus.PENDING, RunStatus.RUNNING),
        (RunStatus.RUNNING, RunStatus.STREAMING),
    ),
    RunStatus.DONE: ((RunStatus.PENDING, RunStatus.RUNNING), (RunStatus.RUNNING, RunStatus.DONE)),
    RunStatus.FAILED: ((RunStatus.PENDING, RunStatus.FAILED),),
    RunStatus.CANCELLED: ((RunStatus.PENDING, RunStatus.CANCELLED),),
}


def next_states(status: str) -> list[str]:
    """The moves the lesson allows out of status, in lifecycle order ([] for a terminal one)."""
    return [target for target in STATUSES if target in LESSON_MOVES.get(status, frozenset())]


def terminal(status: str) -> bool:
    """Whether the lesson allows no move out of status."""
    return not LESSON_MOVES.get(status)
