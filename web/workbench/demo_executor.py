"""A preview of day 9's worker: takes pending runs and plays a scripted reply, slowly.

It exists so a learner can watch the state machine move: pending ->
running -> streaming (messages appended seq 0..n) -> done, or failed when
the run was sent with "make it fail". It goes through the tree's own
worker query and store, in the tree's host, so the guards it meets are the
tree's guards, and a tree that hangs stops only the run being played.

It needs only what DemoBench names; the Workbench (workbench.py) provides it, and
imports this module, never the other way round.
"""

from __future__ import annotations

import threading
from typing import Protocol

from labs.lesson import RunStatus
from labs.term.i18n import N_

from ..i18n import Sentence, Verbatim
from .journal import Action, AttemptOutcome, Entry, Journal
from .remote_store import RemoteStore, error_text


class DemoBench(Protocol):
    """What the demo executor uses of a bench: its store (the tree's, in its host), journal
    and moves."""

    name: str
    store: RemoteStore
    journal: Journal
    will_fail: set[str]

    @property
    def unavailable(self) -> type[Exception]:
        """The tree's StoreUnavailableError."""
        ...

    def run_ids(self) -> list[str]:
        """The runs the bench sent and the database still holds."""
        ...

    def move(self, run_id: str, source: str, target: str, actor: str) -> Entry:
        """Ask the store for source -> target; journal and return what it said."""
        ...

    def append(self, run_id: str, seq: int, role: str, content: str, actor: str) -> Entry:
        """Write a message at seq; journal and return whether the store took it."""
        ...


# The scripted reply, streamed one piece a message. The view that switches the executor on
# passes it in the page's language: these are the dashboard's words, written into the store.
REPLY = (
    N_("Sure, "),
    N_("looking at Friday's flights… "),
    N_("three options found; "),
    N_("the 09:40 is cheapest."),
    N_(" Anything else?"),
    N_(" (end of the scripted reply)"),
)


class DemoExecutor:
    """A background thread that plays pending runs of one bench, one at a time."""

    def __init__(self, bench: DemoBench, *, pace: float, chunks: int) -> None:
        self.bench = bench
        self.pace = pace
        self.chunks = max(1, min(chunks, len(REPLY)))
        self.reply: tuple[str, ...] = REPLY  # the script, in the language it was switched on in
        self.playing: str | None = None  # the run being played right now
        # A run whose script the store cut short; it is finished before anything else.
        self.interrupted: str | None = None
        # Why the store did not answer (its error, as it said it), while it does not.
        self.waiting_for_store = ""
        self.skipped: set[str] = set()  # runs whose script failed for another reason
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """True while the executor is switched on."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def stalled(self) -> bool:
        """True while the store does not answer and the executor waits for it."""
        return self.active and bool(self.waiting_for_store)

    @property
    def busy(self) -> bool:
        """True while a run is being played."""
        return self.playing is not None

    def start(self, pace: float | None = None, reply: tuple[str, ...] | None = None) -> None:
        """Switch on (idempotent); pace is the seconds between two steps, reply the script."""
        with self._lock:
            if pace is not None:
                self.pace = pace
            if reply is not None:
                self.reply = reply
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
        while not self._stop.is_set():
            try:
                self._beat()
            except self.bench.unavailable as error:  # the database went away: wait for it
                self._stalled(error)
            except Exception as error:  # a learner's store bug: note it, skip that run, go on
                self._give_up(error)
            else:
                self._answered()
            self._stop.wait(max(self.pace / 2, 0.01))

    def _beat(self) -> None:
        """Finish a run the store interrupted, then play the pending ones."""
        if self.interrupted is not None:
            self._play(self.interrupted, resuming=True)
            self.interrupted = None
        try:
            runs = self.bench.store.pending_runs(10)  # the tree's worker query, in its host
        except self.bench.unavailable:
            raise
        except Exception:  # a learner's query may fail; try again at the next beat
            runs = []
        for run in runs:
            if self._stop.is_set():
                break
            if run.id in self.bench.run_ids() and run.id not in self.skipped:
                self.interrupted = run.id  # until its script ends, whatever ends it
                self._play(run.id, resuming=False)
                self.interrupted = None

    def _stalled(self, error: Exception) -> None:
        """Say once per outage that the store is gone, and which run waits for it."""
        if self.waiting_for_store:
            return
        self.waiting_for_store = error_text(error)
        quoted = Verbatim(self.waiting_for_store)
        detail = (
            Sentence(
                N_("{error}; run {run_id} resumes where it stopped"),
                error=quoted,
                run_id=self.interrupted,
            )
            if self.interrupted
            else quoted
        )
        self.bench.journal.add(
            Entry(
                self.interrupted or "",
                "demo worker",
                Action.STORE,
                AttemptOutcome.UNAVAILABLE,
                detail,
            )
        )

    def _give_up(self, error: Exception) -> None:
        """Journal an unexpected error once and never play that run again."""
        run_id, self.interrupted = self.interrupted or "", None
        if run_id in self.skipped:  # the same error at every beat: said once is enough
            return
        self.skipped.add(run_id)
        self.bench.journal.add(
            Entry(
                run_id,
                "demo worker",
                Action.STORE,
                AttemptOutcome.REFUSED,
                Sentence(
                    N_("{error}; the demo executor skips this run"),
                    error=Verbatim(error_text(error)),
                ),
            )
        )

    def _answered(self) -> None:
        """The store answers again after an outage: note it in the journal."""
        if self.waiting_for_store:
            self.waiting_for_store = ""
            self.bench.journal.add(
                Entry(
                    "",
                    "demo worker",
                    Action.STORE,
                    AttemptOutcome.RESUMED,
                    Sentence(N_("the store answers again")),
                )
            )

    def _play(self, run_id: str, *, resuming: bool) -> None:
        self.playing = run_id
        try:
            self._script(run_id, resuming)
        finally:
            self.playing = None

    def _script(self, run_id: str, resuming: bool) -> None:
        """Claim and play a run; a resumed one goes on from where the store says it is."""
        bench, actor = self.bench, "demo worker"
        status = str(bench.store.get_run(run_id).status) if resuming else RunStatus.PENDING
        if status == RunStatus.PENDING:
            # Claiming is a compare-and-set: if another worker (or a button) moved it, skip it.
            claimed = bench.move(run_id, RunStatus.PENDING, RunStatus.RUNNING, actor)
            if claimed.outcome == AttemptOutcome.REFUSED:
                return
            status = RunStatus.RUNNING
        run = bench.store.get_run(run_id)
        written = {m.seq for m in bench.store.messages_for_run(run_id)}
        if status == RunStatus.RUNNING:
            if 0 not in written and not self._step(
                bench.append(run_id, 0, "user", run.input, actor).outcome
            ):
                return
            streaming = bench.move(run_id, RunStatus.RUNNING, RunStatus.STREAMING, actor)
            if not self._step(streaming.outcome):
                return
        elif status != RunStatus.STREAMING:
            return  # done, failed or cancelled meanwhile: nothing left to play
        fail = run_id in bench.will_fail
        for seq, chunk in enumerate(self.reply[: self.chunks], start=1):
            if fail and seq > self.chunks // 2 + 1:
                bench.move(run_id, RunStatus.STREAMING, RunStatus.FAILED, actor)
                return
            if seq in written:  # written before the store went away
                continue
            if not self._step(bench.append(run_id, seq, "assistant", chunk, actor).outcome):
                return
        bench.move(run_id, RunStatus.STREAMING, RunStatus.DONE, actor)

    def _step(self, outcome: AttemptOutcome) -> bool:
        """Wait one beat; False when the script must stop (refused, or switched off)."""
        return outcome != AttemptOutcome.REFUSED and not self._stop.wait(self.pace)
