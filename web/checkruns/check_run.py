"""Running the checks in a child process, so a learner's bug cannot hang or kill the dashboard.

The child is `python -m web.checkruns.check_process ... --report FILE` (the checks of
`python -m labs check --extra`); it appends one JSON line per finished check
(flushed at once, its texts in every language), then a summary line. A thread
per run reads the file while the child runs, so each row shows up as its
check finishes. A fresh process imports the tree afresh, so edits show up
on the next run without restarting the dashboard.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from labs.checking.api import CHECK_TIMEOUT
from labs.term.i18n import N_
from labs.trees.finding import REPO_ROOT
from labs.untrusted import clean_text

from ..i18n import Localized, Sentence, Verbatim
from .child import Child
from .rows import FINISHED, CheckRow, ReportTail, RowStatus, build_rows, final_rows

# Seconds between two looks at the report file while the child runs.
POLL = 0.1
# What the dashboard keeps of the child's stdout and of its stderr: 2 KiB from the start and
# 2 KiB from the end; a crash's traceback ends up in the tail.
KEPT_OUTPUT = 4096
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
    # Why the checks could not run (import error, timeout, crash): the child's words (in every
    # language), or the dashboard's, worded by the page that shows them.
    error: str | Sentence | Localized = ""
    started_at: str = ""
    finished_at: str = ""
    seconds: float = 0.0
    running: bool = False
    # Names this run among the runs of its tree and store: a page polling an older one
    # gets the whole section again.
    id: str = field(default_factory=lambda: secrets.token_hex(4))
    _child: Child | None = field(default=None, repr=False)
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
        """Kill the child if it still runs (the dashboard is shutting down)."""
        self._stopping = True
        child = self._child
        if child is not None and self.running:
            child.kill()


def check_command(
    spec: str, store: str, report: Path, check_timeout: float = CHECK_TIMEOUT
) -> list[str]:
    """The command line of the child that runs every check and writes the report."""
    return [
        sys.executable,
        "-m",
        "web.checkruns.check_process",
        "--tree",
        spec,
        "--store",
        store,
        "--report",
        str(report),
        "--check-timeout",
        f"{check_timeout:g}",
    ]


def start_checks(
    tree: str,
    spec: str,
    store: str,
    *,
    database_url: str | None,
    timeout: float,
    output_limit: int = KEPT_OUTPUT,
    on_end: Callable[[], None] = lambda: None,
    check_timeout: float = CHECK_TIMEOUT,
) -> CheckRun:
    """Start every check on a tree in a child process; rows fill in as checks finish.

    The child is killed after timeout seconds; a check that takes more than check_timeout
    seconds fails (with where it was stuck) and the others still run. on_end is called
    once the run has finished, whatever ended it.
    """
    env = dict(os.environ)
    env.pop("MOCK", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    run = CheckRun(
        tree,
        store,
        build_rows([], running=True),
        started_at=datetime.now().strftime("%H:%M:%S"),
        running=True,
    )

    def watch() -> None:
        try:
            _watch(run, spec, env, (timeout, check_timeout), output_limit)
        except Exception as error:  # a bug here must still end the run, as a visible error
            if run._child is not None:
                run._child.kill()
            said = Sentence(
                N_("the dashboard lost track of the check process: %(error)s"),
                error=Verbatim(f"{type(error).__name__}: {error}"),
            )
            run.rows, run.error = final_rows([], said)
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


def _watch(
    run: CheckRun, spec: str, env: dict[str, str], timeouts: tuple[float, float], limit: int
) -> None:
    """The run's thread: start the child, show each result as it lands, end the run."""
    timeout, check_timeout = timeouts
    started = time.perf_counter()
    lines: list[dict[str, Any]] = []
    stopped = Sentence()  # why the dashboard stopped the child, or nothing
    with tempfile.TemporaryDirectory(prefix="lab-checks-") as folder:
        report = ReportTail(Path(folder) / "report.jsonl")
        try:
            child = Child(
                check_command(spec, run.store, report.path, check_timeout),
                cwd=REPO_ROOT,
                env=env,
                output_limit=limit,
            )
        except OSError as error:
            stopped = Sentence(
                N_("the check process could not start: %(error)s"), error=Verbatim(str(error))
            )
        else:
            run._child = child
            code = None
            while code is None:
                code = child.wait(POLL)
                fresh = report.read()
                if fresh:
                    lines += fresh
                    run.rows = build_rows(lines, running=True)
                if code is None and time.perf_counter() - started > timeout:
                    child.kill()
                    stopped = Sentence(
                        N_(
                            "timed out after %(seconds)s s and was stopped: "
                            "an infinite loop, or a wait that never ends?"
                        ),
                        seconds=f"{timeout:g}",
                    )
                    break
            child.finish()
            lines += report.read()
            if run._stopping and not stopped:
                stopped = Sentence(N_("stopped: the dashboard was shutting down"))
            elif code not in (0, 1, None):
                output = clean_text(child.stderr.text(), keep_newlines=True).strip()
                stopped = Sentence(
                    N_("the check process stopped with exit code %(code)s: %(said)s"),
                    code=code,
                    said=Verbatim(output) if output else Sentence(N_("(no output)")),
                )
    run.rows, run.error = final_rows(lines, stopped)
    run.seconds = time.perf_counter() - started
    run.finished_at = datetime.now().strftime("%H:%M:%S")
