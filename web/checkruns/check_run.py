"""Running the checks from the dashboard, so a learner's bug can neither hang nor kill it.

A run is labs.checking's run_checks, driven from a thread of the dashboard:
the driver never imports the tree, and each tree host that does is exec'd
as a process of its own (an ExecLauncher, as the runs view's hosts are:
never forked from a threaded server holding Flask's state). A fresh process
imports the tree afresh, so edits show up on the next run without restarting
the dashboard. Each result becomes a row as its check finishes.

The driver's thread words every message in every language at once
(phrases.py), in a context of its own: the rest of the dashboard keeps its
language, and each page shows the run in its own.

However a run ends, it ends: a check that hangs or whose host crashes fails
and the others run on a new host (the driver's doing); a run that goes on
past its time limit, or a dashboard shutting down, has its hosts killed.
"""

from __future__ import annotations

import contextvars
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from labs.checking.api import CHECK_TIMEOUT, CheckResult, ExecLauncher, Report, run_checks
from labs.term.i18n import N_, use_translations
from labs.trees.api import REPO_ROOT

from ..i18n import Localized, Sentence
from .phrases import EveryLanguage, in_every_language
from .rows import FINISHED, CheckRow, RowStatus, build_rows, final_rows
from .run_hosts import RunHosts, RunStoppedError

# Seconds the run waits for the driver to notice its hosts were killed (it reads their
# pipes' end at once), before it ends the run without it.
STOP_GRACE = 10.0
# A row's status in CheckRun.seen.
STATUS_LETTERS = {
    RowStatus.PASS: "p",
    RowStatus.FAIL: "f",
    RowStatus.NOT_RUN: "n",
    RowStatus.RUNNING: "r",
    RowStatus.WAITING: "w",
    RowStatus.STARTING: "s",
}


@dataclass
class CheckRun:
    """One run of the checks on one tree and store, as the view shows it, live or finished."""

    tree: str
    store: str
    rows: list[CheckRow]
    # Why the checks could not run (import error, timeout, a bug): the checks' words (in every
    # language), or the dashboard's, worded by the page that shows them.
    error: str | Sentence | Localized = ""
    started_at: str = ""
    finished_at: str = ""
    seconds: float = 0.0
    running: bool = False
    # Names this run among the runs of its tree and store: a page polling an older one
    # gets the whole section again.
    id: str = field(default_factory=lambda: secrets.token_hex(4))
    _hosts: RunHosts | None = field(default=None, repr=False)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    _stopping: bool = field(default=False, repr=False)

    @property
    def six(self) -> list[CheckRow]:
        """Checks 1 to 6."""
        return [r for r in self.rows if not r.extra]

    @property
    def extras(self) -> list[CheckRow]:
        """The extra checks."""
        return [r for r in self.rows if r.extra]

    @property
    def passed(self) -> int:
        """How many of the six passed."""
        return sum(r.status == RowStatus.PASS for r in self.six)

    @property
    def seen(self) -> str:
        """What a page showing this run shows now, in a few letters: a row's status each, and
        whether the run ended in an error. Polling sends it back; a row whose letter changed
        is sent again."""
        letters = "".join(STATUS_LETTERS.get(row.status, "?") for row in self.rows)
        return letters + ("e" if self.error else "") + ("" if self.running else ".")

    @property
    def finished_rows(self) -> int:
        """How many rows (of the six and the extras) have their verdict."""
        return sum(r.status in FINISHED for r in self.rows)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run has finished; False if timeout seconds passed first."""
        return self._done.wait(timeout)

    def stop(self) -> None:
        """Kill the run's hosts if it still runs (the dashboard is shutting down)."""
        self._stopping = True
        if self._hosts is not None and self.running:
            self._hosts.stop()


class Progress:
    """What the driver has said so far: which check began, which finished, and the report.

    Fed from the driver's thread; once the run is stopped, it takes nothing more in, so
    the rows shown end where the run was stopped.
    """

    def __init__(self, run: CheckRun, hosts: RunHosts) -> None:
        self.run = run
        self.hosts = hosts
        self.lock = threading.Lock()
        self.results: list[CheckResult] = []
        self.report: Report | None = None
        self.error = Localized({})  # what escaped run_checks, in every language
        self.closed = False

    def on_start(self, key: str) -> None:
        """A check begins: the rows say it runs. A stopped run begins no more checks."""
        with self.lock:
            if self.closed or self.hosts.stopped:
                raise RunStoppedError
            self.run.rows = build_rows(self.results, started=True, running=True)

    def on_result(self, result: CheckResult) -> None:
        """A check finished: its row shows its verdict."""
        with self.lock:
            if self.closed or self.hosts.stopped:
                return
            self.results.append(result)
            self.run.rows = build_rows(self.results, started=True, running=True)

    def ended(self, report: Report) -> None:
        """run_checks returned its report."""
        with self.lock:
            if not (self.closed or self.hosts.stopped):
                self.report = report

    def failed(self, error: Exception) -> None:
        """Something escaped run_checks (a bug in the kit): the run says what."""
        with self.lock:
            if not (self.closed or self.hosts.stopped):
                self.error = could_not_run(error)

    def close(self) -> tuple[list[CheckResult], Report | None, Localized]:
        """Take nothing more in; what was said until now."""
        with self.lock:
            self.closed = True
            return list(self.results), self.report, self.error


def could_not_run(error: Exception) -> Localized:
    """Why the checks could not run when a bug (the kit's, the dashboard's) stopped them."""
    said = EveryLanguage().gettext(N_("the checks could not run: {error}"))
    return Localized(in_every_language(said.format(error=f"{type(error).__name__}: {error}")))


def drive(
    progress: Progress, spec: str, store: str, database_url: str | None, check_timeout: float
) -> None:
    """The driver's thread: every check on the tree, each message worded in every language.

    The hosts start from this thread, so any left when it ends die with it
    (labs.checking.host's die_with_parent).
    """
    use_translations(EveryLanguage())  # in this thread's own context (see start_checks)
    try:
        report = run_checks(
            spec,
            store,
            extra=True,
            database_url=database_url,
            on_result=progress.on_result,
            on_start=progress.on_start,
            launcher=progress.hosts,
            check_timeout=check_timeout,
        )
    except RunStoppedError:
        return
    except Exception as error:  # a bug in the kit ends the run, as a visible error
        progress.failed(error)
        return
    progress.ended(report)


def host_launcher() -> ExecLauncher:
    """Execs each host from the repository's root, in the dashboard's environment less MOCK
    (the store is the one asked for, never MOCK's)."""
    environ = {name: value for name, value in os.environ.items() if name != "MOCK"}
    return ExecLauncher(env=environ, cwd=REPO_ROOT)


def start_checks(
    tree: str,
    spec: str,
    store: str,
    *,
    database_url: str | None,
    timeout: float,
    on_end: Callable[[], None] = lambda: None,
    check_timeout: float = CHECK_TIMEOUT,
) -> CheckRun:
    """Start every check on a tree; rows fill in as checks finish.

    The run's hosts are killed after timeout seconds; a check that takes more than
    check_timeout seconds fails (with where it was stuck) and the others still run.
    on_end is called once the run has finished, whatever ended it.
    """
    hosts = RunHosts(host_launcher())
    run = CheckRun(
        tree,
        store,
        build_rows([], started=False, running=True),
        started_at=datetime.now().strftime("%H:%M:%S"),
        running=True,
        _hosts=hosts,
    )
    progress = Progress(run, hosts)

    def in_own_context() -> None:
        # A copy of this new thread's context, which holds none of the request's: the
        # translations chosen in it stay there.
        contextvars.copy_context().run(drive, progress, spec, store, database_url, check_timeout)

    def watch() -> None:
        try:
            driver = threading.Thread(
                target=in_own_context, daemon=True, name=f"checks-driver-{tree}-{store}"
            )
            driver.start()
            _watch(run, progress, driver, timeout)
        except Exception as error:  # a bug here must still end the run, as a visible error
            hosts.stop()
            run.rows, run.error = final_rows([], None, could_not_run(error))
            run.finished_at = datetime.now().strftime("%H:%M:%S")
            raise
        finally:
            # Free the slot first: whoever sees the run finished may start the next one at once.
            try:
                on_end()
            finally:
                run.running = False
                run._done.set()

    threading.Thread(target=watch, daemon=True, name=f"checks-{tree}-{store}").start()
    return run


def _watch(run: CheckRun, progress: Progress, driver: threading.Thread, timeout: float) -> None:
    """The run's thread: wait for the driver within the time limit, then end the run."""
    started = time.perf_counter()
    stopped = Sentence()  # why the dashboard stopped the run, or nothing
    while driver.is_alive() and not run._stopping:
        left = timeout - (time.perf_counter() - started)
        if left <= 0:
            stopped = Sentence(
                N_(
                    "timed out after {seconds} s and was stopped: "
                    "an infinite loop, or a wait that never ends?"
                ),
                seconds=f"{timeout:g}",
            )
            break
        driver.join(min(left, 0.1))
    if driver.is_alive():
        progress.hosts.stop()
        driver.join(STOP_GRACE)
    results, report, error = progress.close()
    if run._stopping and not stopped:
        stopped = Sentence(N_("stopped: the dashboard was shutting down"))
    run.rows, run.error = final_rows(results, report, stopped or error)
    run.seconds = time.perf_counter() - started
    run.finished_at = datetime.now().strftime("%H:%M:%S")
