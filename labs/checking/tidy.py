"""Keeping a shared database tidy between self-checks, without deleting anything.

On Postgres every run of the checks writes to the same tables. Runs a check
inserted and left pending would pile up in the worker's queue, so after each
check the runner moves them to cancelled, the state machine's own way of
saying "nobody will run this". Rows are never deleted.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from labs.trees.finding import Tree


class RunRecorder:
    """Passes every call through to a store, remembering the runs create_run inserted."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.Lock()  # checks create runs from several threads
        self._created: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def create_run(self, *args: Any, **kwargs: Any) -> Any:
        """Create the run in the store, and note its id if this call inserted it."""
        outcome = self._store.create_run(*args, **kwargs)
        if getattr(outcome, "created", False):
            with self._lock:
                self._created.append(outcome.run.id)
        return outcome

    def cancel_left_pending(self, tree: Tree) -> None:
        """Move the runs inserted since the last call, if still pending, to cancelled."""
        status = tree.module("shared.states").RunStatus
        with self._lock:
            created, self._created = self._created, []
        for run_id in created:
            # A run already moved on, or a learner's allowlist that refuses the move,
            # leaves the run as it is: tidying must never fail a check.
            with contextlib.suppress(Exception):
                self._store.transition(run_id, status.PENDING, status.CANCELLED)
