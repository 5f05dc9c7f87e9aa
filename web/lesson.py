"""The lesson's state machine as the dashboard draws it: the allowlist the handout teaches.

Kept here as data, not imported from solution/, so the dashboard also runs in
the learners' release, which has no solution (tests/web checks that the two agree).
"""

from __future__ import annotations

# For each status, the statuses a run may move to next (labs/HANDOUT.md, check 4).
LESSON_ALLOWED_STATUSES: dict[str, frozenset[str]] = {
    "pending": frozenset({"running", "cancelled", "failed"}),
    "running": frozenset({"streaming", "done", "failed", "cancelled"}),
    "streaming": frozenset({"done", "failed", "cancelled"}),
    "done": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
