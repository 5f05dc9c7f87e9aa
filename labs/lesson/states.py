"""The lesson's run state machine: its statuses, the moves it allows, and a way to each status.

Defined once, here: the checks judge every tree by it, the dashboard draws
it and offers its moves, and the release keeps it (the learners' copy has no
solution). tests/grading/test_release.py checks that the solution's own
allowlist says the same.
"""

from __future__ import annotations

# Every status in the order of a run's life.
STATUSES: tuple[str, ...] = ("pending", "running", "streaming", "done", "failed", "cancelled")

# The moves a run may make; every other move is refused with an error naming both states.
LESSON_MOVES: dict[str, frozenset[str]] = {
    "pending": frozenset({"running", "cancelled", "failed"}),
    "running": frozenset({"streaming", "done", "failed", "cancelled"}),
    "streaming": frozenset({"done", "failed", "cancelled"}),
    "done": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}

# How a new (pending) run is brought to each status by moves the lesson allows.
PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "pending": (),
    "running": (("pending", "running"),),
    "streaming": (("pending", "running"), ("running", "streaming")),
    "done": (("pending", "running"), ("running", "done")),
    "failed": (("pending", "failed"),),
    "cancelled": (("pending", "cancelled"),),
}


def next_states(status: str) -> list[str]:
    """The moves the lesson allows out of status, in lifecycle order ([] for a terminal one)."""
    return [target for target in STATUSES if target in LESSON_MOVES.get(status, frozenset())]


def terminal(status: str) -> bool:
    """Whether the lesson allows no move out of status."""
    return not LESSON_MOVES.get(status)
