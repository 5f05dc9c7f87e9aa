"""One tree's lab bench: its store and gateway, and the live table of the runs sent through it.

Every attempt goes through the tree's own code (gateway routes, store
methods), so the starter's bugs show up here exactly as in the checks.
The lesson's buttons are in moves.py, sending messages in intake.py.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

from labs.term.i18n import N_
from labs.trees.finding import load_tree

from .demo import DemoExecutor
from .i18n import Sentence, Verbatim
from .intake import SessionRefusedError
from .journal import Journal
from .moves import LESSON_ALLOWED, LessonMoves
from .outcome import Outcome

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


# A store whose tables are missing names the command that creates them, in backquotes.
ALEMBIC_COMMAND = re.compile(r"`(alembic [^`]+)`")


class Bench(LessonMoves):
    """A tree's store and gateway, the runs sent through it, and the journal of attempts."""

    def __init__(
        self, name: str, spec: str, database_url: str | None, *, pace: float, chunks: int
    ) -> None:
        self.name = name
        self.tree = load_tree(spec)
        self.notice = Sentence()  # why the bench is not on the store it was asked for
        self.store_kind, self.store = self._open_store(database_url)
        errors = self.tree.module("shared.errors")
        # The tree's own "the database did not answer": the views show it as a notice.
        self.unavailable: type[Exception] = errors.StoreUnavailableError
        # A run or session gone from the database (rows deleted, tables migrated again).
        self.run_not_found: type[Exception] = errors.RunNotFoundError
        self.session_not_found: type[Exception] = errors.SessionNotFoundError
        self.gateway = self.tree.module("gateway").create_app(self.store)
        self.journal = Journal()
        self.last: Outcome | None = None
        self.will_fail: set[str] = set()
        self._requests: dict[str, dict[str, str]] = {}  # run id -> the body that created it
        self._gone: set[str] = set()
        self._dropped = 0
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
            self.notice = Sentence(
                N_(
                    "Postgres could not be used (%(error)s); "
                    "this bench runs on the memory store instead."
                ),
                error=Verbatim(f"{type(error).__name__}: {error}"),
            )
            return "memory", infra.MemoryStore()
        return "postgres", store

    def down(self, error: Exception) -> Sentence:
        """The notice a view shows when the store stops serving mid-session, worded by cause.

        What the store (or the gateway) said is shown as it said it, in the page's sentence.
        """
        reason = str(error)
        said = error.sentence if isinstance(error, SessionRefusedError) else Verbatim(reason)
        commands = ALEMBIC_COMMAND.findall(reason)  # the last one makes the tables
        if commands:  # the database answers, but this tree's tables are not there
            return Sentence(
                N_(
                    "the %(store)s store cannot work without its tables (%(said)s); "
                    "run `%(command)s`, then reload"
                ),
                store=self.store_kind,
                said=said,
                command=commands[-1],
            )
        if "cannot reach the database" in reason or "database unreachable" in reason:
            return Sentence(
                N_(
                    "the %(store)s store did not answer (%(said)s); "
                    "start the database again and reload"
                ),
                store=self.store_kind,
                said=said,
            )
        return Sentence(
            N_("the %(store)s store did not answer (%(said)s); reload to try again"),
            store=self.store_kind,
            said=said,
        )

    def close(self) -> None:
        """Stop the demo executor, then release the store's connections (SqlStore has a pool)."""
        self.executor.stop()
        close = getattr(self.store, "close", None)  # the Store protocol does not require one
        if callable(close):
            close()

    # -- reading ------------------------------------------------------------------------

    def rows(self) -> list[RunRow]:
        """The live table: every run with its status, messages and next moves.

        Runs the database no longer holds are dropped (gone_notice says so).
        """
        rows, gone = [], []
        for run_id in self.run_ids():
            try:
                run = self.store.get_run(run_id)
            except self.run_not_found:
                gone.append(run_id)
                continue
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
            or any(row.status == "pending" for row in rows)
        )
