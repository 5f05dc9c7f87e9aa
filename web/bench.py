"""One tree's lab bench: its store, its gateway, and the moves that provoke the lesson.

Every attempt goes through the tree's own code (gateway routes, store
methods), so the starter's bugs show up here exactly as in the checks.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from labs.trees import load_tree
from solution.shared.states import ALLOWED as LESSON_ALLOWED_STATUSES

from .demo import DemoExecutor
from .intake import Intake
from .journal import Entry, Journal
from .outcome import Outcome
from .safety import FormError

# The lesson's allowlist (the reference one). Buttons offer these moves on both trees,
# and a move outside it that a tree accepts anyway is journalled as illegal.
LESSON_ALLOWED: dict[str, list[str]] = {
    str(state): sorted(str(t) for t in targets)
    for state, targets in LESSON_ALLOWED_STATUSES.items()
}
STATES = [str(state) for state in LESSON_ALLOWED_STATUSES]
MOVING = ("pending", "running", "streaming")


@dataclass(frozen=True)
class RunRow:
    """A run as the live table shows it."""

    id: str
    status: str
    input: str
    messages: int
    updated: str
    next_states: list[str]
    will_fail: bool


class Bench(Intake):
    """A tree's store and gateway, the runs sent through it, and the journal of attempts."""

    def __init__(
        self, name: str, spec: str, database_url: str | None, *, pace: float, chunks: int
    ) -> None:
        self.name = name
        self.tree = load_tree(spec)
        self.notice = ""
        self.store_kind, self.store = self._open_store(database_url)
        # The tree's own "the database did not answer": the views show it as a notice.
        self.unavailable: type[Exception] = self.tree.module("shared.errors").StoreUnavailableError
        self.gateway = self.tree.module("gateway").create_app(self.store)
        self.journal = Journal()
        self.last: Outcome | None = None
        self.will_fail: set[str] = set()
        self._requests: dict[str, dict[str, str]] = {}  # run id -> the body that created it
        self._session_id: str | None = None
        self._lock = threading.Lock()
        self.executor = DemoExecutor(self, pace=pace, chunks=chunks)

    def _open_store(self, database_url: str | None) -> tuple[str, Any]:
        infra = self.tree.module("infra")
        if not database_url:
            return "memory", infra.MemoryStore()
        try:
            store = infra.make_store({"DATABASE_URL": database_url, "DB_SCHEMA": self.tree.package})
            store.ping()
        except Exception as error:  # no driver module yet, database down, schema missing
            self.notice = (
                f"Postgres could not be used ({type(error).__name__}: {error}); "
                "this bench runs on the memory store instead."
            )
            return "memory", infra.MemoryStore()
        return "postgres", store

    def down(self, error: Exception) -> str:
        """The notice a view shows when the store stops answering mid-session."""
        return (
            f"the {self.store_kind} store did not answer ({error}); "
            "start the database again and reload"
        )

    def close(self) -> None:
        """Stop the demo executor, then release the store's connections (SqlStore has a pool)."""
        self.executor.stop()
        close = getattr(self.store, "close", None)  # the Store protocol does not require one
        if callable(close):
            close()

    # -- moving runs and writing messages through the tree's store ----------------------

    def move(self, run_id: str, source: str, target: str, actor: str) -> Entry:
        """Ask the store for source -> target and journal what it said."""
        statuses = self.tree.module("shared.states").RunStatus
        try:
            self.store.transition(run_id, statuses(source), statuses(target))
        except self.unavailable:  # not a refusal: the store did not answer at all
            raise
        except Exception as error:  # the tree's typed errors, or a learner's bug
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    "transition",
                    "refused",
                    f"{type(error).__name__}: {error}",
                    source,
                    target,
                )
            )
        if target in LESSON_ALLOWED[source]:
            return self.journal.add(
                Entry(run_id, actor, "transition", "accepted", "", source, target)
            )
        return self.journal.add(
            Entry(
                run_id,
                actor,
                "transition",
                "illegal",
                "went through, though the allowlist forbids it",
                source,
                target,
            )
        )

    def append(self, run_id: str, seq: int, role: str, content: str, actor: str) -> Entry:
        """Write a message at seq and journal whether the store took it."""
        try:
            session_id = self.store.get_run(run_id).session_id
            self.store.append_message(session_id, run_id, role, content, seq)
        except self.unavailable:  # not a refusal: the store did not answer at all
            raise
        except Exception as error:  # DuplicateMessageError is the expected one
            return self.journal.add(
                Entry(
                    run_id, actor, "message", "refused", f"{type(error).__name__}: {error}", seq=seq
                )
            )
        taken = sum(1 for m in self.store.messages_for_run(run_id) if m.seq == seq)
        if taken > 1:
            return self.journal.add(
                Entry(
                    run_id,
                    actor,
                    "message",
                    "duplicate",
                    f"stored beside {taken - 1} other(s) at seq {seq}",
                    seq=seq,
                )
            )
        return self.journal.add(Entry(run_id, actor, "message", "accepted", content, seq=seq))

    def status_of(self, run_id: str) -> str:
        """The run's status as the store reports it now."""
        self._request_of(run_id)
        return str(self.store.get_run(run_id).status)

    def advance(self, run_id: str, target: str) -> Outcome:
        """Move a run to one of the next states the lesson's allowlist offers."""
        current = self.status_of(run_id)
        if target not in LESSON_ALLOWED[current]:
            offered = ", ".join(LESSON_ALLOWED[current]) or "nothing (terminal)"
            raise FormError(
                "target",
                f"{current} → {target!r} is not offered; from {current} the choices are: {offered}",
            )
        return self._outcome_of(self.move(run_id, current, target, "dashboard"))

    def force_back(self, run_id: str) -> Outcome:
        """Try the move the lesson forbids: done -> running."""
        current = self.status_of(run_id)
        if current != "done":
            raise FormError("run", f"force done → running needs a done run; it is {current}")
        return self._outcome_of(self.move(run_id, "done", "running", "dashboard"))

    def duplicate_seq(self, run_id: str) -> Outcome:
        """Write a second message at a seq the run already has (seq 0 if it has none)."""
        self._request_of(run_id)
        seqs = [m.seq for m in self.store.messages_for_run(run_id)]
        if not seqs:
            self.append(run_id, 0, "assistant", "first write at seq 0", "dashboard")
        seq = max(seqs, default=0)
        return self._outcome_of(
            self.append(run_id, seq, "assistant", f"second write at seq {seq}", "dashboard")
        )

    def _outcome_of(self, entry: Entry) -> Outcome:
        what = (
            f"{entry.source} → {entry.target}"
            if entry.action == "transition"
            else f"message at seq {entry.seq}"
        )
        tone = {"accepted": "ok", "refused": "refused"}.get(entry.outcome, "warn")
        words = {
            "accepted": "accepted",
            "refused": "REFUSED",
            "illegal": "WENT THROUGH (illegal)",
            "duplicate": "STORED TWICE",
        }
        text = f"run {entry.run_id}: {what} {words[entry.outcome]}"
        return self._remember(Outcome(tone, text + (f": {entry.detail}" if entry.detail else "")))

    # -- reading ------------------------------------------------------------------------

    def run_ids(self) -> list[str]:
        """Runs sent from this bench, newest first."""
        with self._lock:
            return list(reversed(self._requests))

    def rows(self) -> list[RunRow]:
        """The live table: every run with its status, messages and next moves."""
        rows = []
        for run_id in self.run_ids():
            run = self.store.get_run(run_id)
            status = str(run.status)
            rows.append(
                RunRow(
                    run_id,
                    status,
                    run.input,
                    len(self.store.messages_for_run(run_id)),
                    run.updated_at.strftime("%H:%M:%S"),
                    LESSON_ALLOWED[status],
                    run_id in self.will_fail,
                )
            )
        return rows

    @staticmethod
    def state_counts(rows: list[RunRow]) -> Counter[str]:
        """How many runs are in each state now."""
        return Counter(row.status for row in rows)

    def moving(self, rows: list[RunRow]) -> bool:
        """True while the demo executor has work: the page keeps polling only then."""
        return self.executor.active and (
            self.executor.busy
            or self.executor.stalled  # keep polling, to show the runs again once it answers
            or any(row.status == "pending" for row in rows)
        )
