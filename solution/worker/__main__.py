"""python -m <tree>.worker: report the pending runs every few seconds.

Read-only on day 8: it shows what a worker would pick up, and takes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..infra import make_store
from ..shared.errors import StoreConfigError, StoreUnavailableError
from ..shared.say import _
from ..shared.schema import Run
from .queries import pending_runs


def main(argv: list[str] | None = None) -> int:
    """Poll the store and print what is waiting; --once polls a single time."""
    parser = argparse.ArgumentParser(
        prog="worker", description=_("Report the pending runs every few seconds; take nothing.")
    )
    parser.add_argument("--once", action="store_true", help=_("poll once and exit"))
    parser.add_argument(
        "--interval",
        type=float,
        default=2.0,
        help=_("seconds between polls (default: %(default)s)"),
    )
    args = parser.parse_args(argv)
    try:
        store = make_store()
    except StoreConfigError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    if os.environ.get("MOCK") == "1":
        # Its own process, so its own empty MemoryStore: the gateway's runs are elsewhere.
        print(_("MOCK=1: this worker sees only its own in-memory store (see MOCK.md)"), flush=True)
    while True:
        try:
            report(pending_runs(store))
        except StoreUnavailableError as error:
            # A worker outlives a database restart: say so, and poll again.
            print(_("store unavailable: {error}").format(error=error), file=sys.stderr, flush=True)
            if args.once:
                return 1
        if args.once:
            return 0
        time.sleep(args.interval)


def report(runs: list[Run]) -> None:
    """Print how many runs wait, and one line for each."""
    print(_("{count} pending run(s)").format(count=len(runs)), flush=True)
    line = _("  {run}  session {session}  {text}")
    for run in runs:
        shown = line.format(run=run.id, session=run.session_id, text=repr(run.input[:60]))
        print(shown, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
