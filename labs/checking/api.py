"""What a program outside this package uses of it: running the checks, reading their results,
and talking to a tree's host.

The dashboard imports these names from here, never from the modules that define them, so the
modules can be split or renamed without its noticing. They are gathered here rather than in
the package's __init__, which imports nothing: a tree's host is started as
`python -m labs.checking.host`, imports the package on its way, and must start fast, so it
pays for none of this.

    running the checks    run_checks, Report, CHECK_TIMEOUT, CHECKS, EXTRA_CHECKS
    their results         CheckResult, Hint, Event; result_json, summary_json and
                          result_from_json, a result as a report line and back;
                          LineType, what a line of that report holds
    their traces          LANES, Arrow (what an arrow means), and the notes that mark
                          a broken rule: NOTES, SECOND_RUN, SECOND_ROW, NEW_KEY
    a tree's host         HostSpec, StoreKind, HostProcess, Launcher, ExecLauncher,
                          HostSession, MAX_BATCH (the most requests in one batch)
    its errors            HostError, HostTimeoutError, RefusedError, TreeDoesNotImportError
"""

from __future__ import annotations

from .checks import CHECKS
from .driver import CHECK_TIMEOUT
from .errors import HostError, HostTimeoutError, RefusedError, TreeDoesNotImportError
from .extra import EXTRA_CHECKS
from .hints import Hint
from .launch import ExecLauncher
from .marks import NEW_KEY, NOTES, SECOND_ROW, SECOND_RUN
from .protocol import MAX_BATCH, HostProcess, HostSpec, Launcher, StoreKind
from .report import LineType, Report, result_from_json, result_json, summary_json
from .result import CheckResult
from .runner import run_checks
from .session import HostSession
from .trace import LANES, Arrow, Event

__all__ = [
    "CHECKS",
    "CHECK_TIMEOUT",
    "EXTRA_CHECKS",
    "LANES",
    "MAX_BATCH",
    "NEW_KEY",
    "NOTES",
    "SECOND_ROW",
    "SECOND_RUN",
    "Arrow",
    "CheckResult",
    "Event",
    "ExecLauncher",
    "Hint",
    "HostError",
    "HostProcess",
    "HostSession",
    "HostSpec",
    "HostTimeoutError",
    "Launcher",
    "LineType",
    "RefusedError",
    "Report",
    "StoreKind",
    "TreeDoesNotImportError",
    "result_from_json",
    "result_json",
    "run_checks",
    "summary_json",
]
