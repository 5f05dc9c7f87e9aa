"""One tree's lab bench: its store and gateway, and the live table of the runs sent through it.

Every attempt goes through the tree's own code (gateway routes, store
methods, the worker's query), so the starter's bugs show up here exactly as
in the checks. That code runs in the tree's host, a process of its own
(tree_link.py), never in the dashboard's: a tree that loops is stopped
after the time limit, and the page says so. The lesson's buttons are in
moves.py, sending messages in gateway_client.py.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime

from labs.checking.api import HostSpec, RefusedError, StoreKind, TreeDoesNotImportError
from labs.lesson import RunStatus, next_states
from labs.term.i18n import N_
from labs.trees.api import find_tree

from ..i18n import Sentence, Verbatim
from ..rendering.live_parts import Remembered
from .demo_executor import DemoExecutor
from .gateway_client import SessionRefusedError
from .journal import Journal
from .moves import LessonMoves
from .outcome import Outcome
from .remote_store import (
    RemoteStore,
    RunGoneError,
    SessionGoneError,
    StoreDownError,
    TreeRaisedError,
    error_text,
)
from .tree_link import TreeBusyError, TreeLink, TreeNotAnsweringError

MOVING = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.STREAMING)
# Seconds between two tries of Postgres by a bench that fell back to memory (each starts a host).
RETRY_POSTGRES = 5.0


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
    duplicate_of: str | None = None  # the first run of the request this run was made for again


# A store whose tables are missing names the command that creates them, in backquotes.
ALEMBIC_COMMAND = re.compile(r"`(alembic [^`]+)`")


class Workbench(LessonMoves):
    """A tree's store and gateway (in its host), the runs sent through it, and the journal."""

    def __init__(
        self,
        name: str,
        spec: str,
        database_url: str | None,
        *,
        pace: float,
        chunks: int,
        timeout: float,
        start_timeout: float,
    ) -> None:
        self.name = name
        self.tree = find_tree(spec)  # found, never imported: its host imports it
        self.notice = Sentence()  # why the bench is not on the store it was asked for
        self.restarted = Sentence()  # when the tree's host was started again, and what it lost
        memory = HostSpec(
            self.tree.root, StoreKind.MEMORY, None, self.tree.package, self.tree.package
        )
        asked = replace(memory, store=StoreKind.POSTGRES, database_url=database_url)
        # The store the tree's host opened; until one has, the store asked for.
        self.store_kind: str = StoreKind.POSTGRES if database_url else StoreKind.MEMORY
        self.link = TreeLink(
            asked if database_url else memory,
            timeout=timeout,
            start_timeout=start_timeout,
            fallback=memory if database_url else None,
            on_start=self._started,
        )
        self.store = RemoteStore(self.link)
        # The tree's own "the database did not answer": the views show it as a notice.
        self.unavailable: type[Exception] = StoreDownError
        # A run or session gone from the database (rows deleted, tables migrated again).
        self.run_not_found: type[Exception] = RunGoneError
        self.session_not_found: type[Exception] = SessionGoneError
        # What the views show as a notice rather than a failure: the store, or the tree's host.
        # A learner's bug raising where no refusal is expected counts too: never a 500.
        self.failures: tuple[type[Exception], ...] = (
            TreeRaisedError,
            RefusedError,  # what the tree raised on a request made without RemoteStore
            SessionRefusedError,
            TreeNotAnsweringError,
            TreeDoesNotImportError,
        )
        self.journal = Journal()
        self.shown = Remembered()  # what the runs view drew lately, to send pages what changed
        self.last: Outcome | None = None
        self.will_fail: set[str] = set()
        self._requests: dict[str, dict[str, str]] = {}  # run id -> the body that created it
        # A run made again for a request the bench had sent (a retry not recognised): the first.
        self.duplicate_of: dict[str, str] = {}
        self._gone: set[str] = set()
        self._dropped = 0
        self._session_id: str | None = None
        self._lock = threading.Lock()
        self.executor = DemoExecutor(self, pace=pace, chunks=chunks)

    def open(self, *, retry: bool = False) -> None:
        """Start the tree's host if none runs (the page names the store it opened).

        With retry, a bench on memory because Postgres refused tries Postgres again
        (a page the learner loads after migrating, say); when it opens, the runs
        sent to the memory store are gone with it, and the notice says so.
        """
        if retry and self.link.try_asked(RETRY_POSTGRES):
            with self._lock:
                self._requests.clear()
                self.will_fail.clear()
                self.duplicate_of.clear()
                self._gone.clear()
                self._dropped = 0
                self.last = None
            self.journal = Journal()  # the memory store's attempts are not this store's
            self.notice = Sentence(
                N_(
                    "Postgres opened this time, so this bench runs on it now; the runs sent "
                    "to the memory store before are gone with it."
                )
            )
        self.link.open()

    def _started(self, kind: str) -> None:
        """A host started (the link holds its lock: no bench lock is taken here)."""
        switched = (
            kind == StoreKind.POSTGRES
            and self.store_kind == StoreKind.MEMORY
            and self.link.starts > 1
        )
        self.store_kind = kind
        refused = self.link.refused
        if refused is not None:  # no driver module yet, database down, schema missing
            self.notice = Sentence(
                N_(
                    "Postgres could not be used ({error}); this bench runs on the memory "
                    "store instead. Reload the page once that is fixed (after the migration, "
                    "say): the bench tries Postgres again."
                ),
                error=Verbatim(f"{refused.type}: {refused.message}"),
            )
        if self.link.starts > 1 and not switched:
            when = datetime.now().strftime("%H:%M:%S")
            self.restarted = (
                Sentence(
                    N_(
                        "The tree's process was started again at {time}, after it stopped "
                        "answering: its memory store began empty, so the runs sent before are gone."
                    ),
                    time=when,
                )
                if kind == StoreKind.MEMORY
                else Sentence(
                    N_(
                        "The tree's process was started again at {time}, after it stopped "
                        "answering."
                    ),
                    time=when,
                )
            )

    def down(self, error: Exception) -> Sentence:
        """The notice a view shows when the store stops serving mid-session, worded by cause.

        What the store (or the gateway) said is shown as it said it, in the page's sentence.
        """
        if isinstance(error, TreeNotAnsweringError | TreeDoesNotImportError):
            return self._host_down(error)
        if isinstance(error, RefusedError) or (
            isinstance(error, TreeRaisedError) and not isinstance(error, StoreDownError)
        ):  # not the store saying it is down: a learner's bug where no refusal is expected
            return Sentence(
                N_("the {tree} tree raised {said}; fix it, then reload"),
                tree=self.name,
                said=Verbatim(
                    error.describe() if isinstance(error, RefusedError) else error_text(error)
                ),
            )
        reason = str(error)
        said = error.sentence if isinstance(error, SessionRefusedError) else Verbatim(reason)
        commands = ALEMBIC_COMMAND.findall(reason)  # the last one makes the tables
        if commands:  # the database answers, but this tree's tables are not there
            return Sentence(
                N_(
                    "the {store} store cannot work without its tables ({said}); "
                    "run `{command}`, then reload"
                ),
                store=self.store_kind,
                said=said,
                command=commands[-1],
            )
        if "cannot reach the database" in reason or "database unreachable" in reason:
            return Sentence(
                N_(
                    "the {store} store did not answer ({said}); start the database again and reload"
                ),
                store=self.store_kind,
                said=said,
            )
        return Sentence(
            N_("the {store} store did not answer ({said}); reload to try again"),
            store=self.store_kind,
            said=said,
        )

    def _host_down(self, error: TreeNotAnsweringError | TreeDoesNotImportError) -> Sentence:
        """The notice for a tree whose host could not answer: why, and what happens next."""
        if isinstance(error, TreeDoesNotImportError):
            return Sentence(
                N_("the {tree} tree does not import ({said}): fix it, then reload"),
                tree=self.name,
                said=Verbatim(str(error)),
            )
        if isinstance(error, TreeBusyError):
            return Sentence(
                N_(
                    "the {tree} tree is busy: other requests kept the line to it for "
                    "{seconds} s, so this one was not sent; try again shortly"
                ),
                tree=self.name,
                seconds=f"{error.seconds:g}",
            )
        if error.seconds is not None:
            return Sentence(
                N_(
                    "the {tree} tree did not answer within {seconds} s (an endless loop, or a "
                    "lock never released?): the dashboard stopped its process, and the next "
                    "request starts a new one"
                ),
                tree=self.name,
                seconds=f"{error.seconds:g}",
            )
        return Sentence(
            N_("the {tree} tree's process stopped ({said}): the next request starts a new one"),
            tree=self.name,
            said=Verbatim(error.said) if error.said else Sentence(N_("(no output)")),
        )

    def close(self) -> None:
        """Stop the demo executor, then the tree's host (and with it the store's connections)."""
        self.executor.stop()
        self.link.close()

    # -- reading ------------------------------------------------------------------------

    def version(self) -> str:
        """A token that changes whenever what the runs view shows may have changed.

        Everything that changes the runs goes through this bench (the buttons, the demo
        executor), and leaves a trace in what the token is made of: a poll bringing back
        the token it was given has nothing new to fetch.
        """
        executor = self.executor
        seen = (
            self.journal.count,
            len(self._requests),
            self._dropped,
            len(self.will_fail),
            executor.active,
            executor.playing,
            executor.interrupted,
            executor.waiting_for_store,
            id(self.last),
            self.link.starts,
            self.store_kind,
            repr(self.notice),
            repr(self.restarted),
        )
        return hashlib.sha256(repr(seen).encode()).hexdigest()[:16]

    def rows(self) -> list[RunRow]:
        """The live table: every run with its status, messages and next moves, in one request.

        Runs the database no longer holds are dropped (gone_notice says so).
        """
        run_ids = self.run_ids()
        rows, gone = [], []
        for run_id, found in zip(run_ids, self.store.read_runs(run_ids), strict=True):
            if found is None:
                gone.append(run_id)
                continue
            run, messages = found
            rows.append(
                RunRow(
                    run_id,
                    run.status,
                    run.input,
                    messages,
                    run.updated_at.strftime("%H:%M:%S") if run.updated_at else "",
                    next_states(run.status),
                    run_id in self.will_fail,
                    self.duplicate_of.get(run_id),
                )
            )
        self.forget(gone)
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
            or any(row.status == RunStatus.PENDING for row in rows)
        )
