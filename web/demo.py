"""A preview of day 9's worker: takes pending runs and plays a scripted reply, slowly.

It exists so a learner can watch the state machine move: pending ->
running -> streaming (messages appended seq 0..n) -> done, or failed when
the run was sent with "make it fail". It goes through the tree's own
worker query and store, so the guards it meets are the tree's guards.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .bench import Bench

REPLY = (
    "Sure, ",
    "looking at Friday's flights… ",
    "three options found; ",
    "the 09:40 is cheapest.",
    " Anything else?",
    " (end of the scripted reply)",
)


class DemoExecutor:
    """A background thread that plays pending runs of one bench, one at a time."""

    def __init__(self, bench: Bench, *, pace: float, chunks: int) -> None:
        self.bench = bench
        self.pace = pace
        self.chunks = max(1, min(chunks, len(REPLY)))
        self.playing: str | None = None  # the run being played right now
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """True while the executor is switched on."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def busy(self) -> bool:
        """True while a run is being played."""
        return self.playing is not None

    def start(self, pace: float | None = None) -> None:
        """Switch on (idempotent); pace is the seconds between two steps."""
        with self._lock:
            if pace is not None:
                self.pace = pace
            if self.active:
                return
            self._stop.clear()
            self._thread = threading.Thread(
                target=self._loop, daemon=True, name=f"demo-executor-{self.bench.name}"
            )
            self._thread.start()

    def stop(self) -> None:
        """Switch off and wait for the thread; a run in play stops where it is."""
        with self._lock:
            thread, self._thread = self._thread, None
            self._stop.set()
        if thread is not None:
            thread.join(timeout=5)

    def _loop(self) -> None:
        worker = self.bench.tree.module("worker")
        while not self._stop.is_set():
            try:
                runs = worker.pending_runs(self.bench.store, 10)
            except Exception:  # a learner's query may fail; try again at the next beat
                runs = []
            for run in runs:
                if self._stop.is_set():
                    break
                if run.id in self.bench.run_ids():
                    self._play(run.id)
            self._stop.wait(max(self.pace / 2, 0.01))

    def _play(self, run_id: str) -> None:
        self.playing = run_id
        try:
            self._script(run_id)
        finally:
            self.playing = None

    def _script(self, run_id: str) -> None:
        bench, actor = self.bench, "demo worker"
        # Claiming is a compare-and-set: if another worker (or a button) moved it, skip it.
        if bench.move(run_id, "pending", "running", actor).outcome == "refused":
            return
        user = bench.store.get_run(run_id).input
        if not self._step(bench.append(run_id, 0, "user", user, actor).outcome):
            return
        if not self._step(bench.move(run_id, "running", "streaming", actor).outcome):
            return
        fail = run_id in bench.will_fail
        for seq, chunk in enumerate(REPLY[: self.chunks], start=1):
            if fail and seq > self.chunks // 2 + 1:
                bench.move(run_id, "streaming", "failed", actor)
                return
            if not self._step(bench.append(run_id, seq, "assistant", chunk, actor).outcome):
                return
        bench.move(run_id, "streaming", "done", actor)

    def _step(self, outcome: str) -> bool:
        """Wait one beat; False when the script must stop (refused, or switched off)."""
        return outcome != "refused" and not self._stop.wait(self.pace)
