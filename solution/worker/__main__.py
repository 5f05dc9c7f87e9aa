"""python -m <tree>.worker: report the pending runs every few seconds, and take none (day 8)."""

import argparse
import os
import sys
import time

from ..infra import make_store
from ..shared import errors
from .queries import pending_runs


def main(argv: list[str] | None = None) -> int:
    """Poll the store and print what is waiting; --once polls a single time."""
    parser = argparse.ArgumentParser(prog="worker", description=__doc__)
    parser.add_argument("--once", action="store_true", help="poll once and exit")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    args = parser.parse_args(argv)
    try:
        store = make_store()
    except errors.StoreConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if os.environ.get("MOCK") == "1":  # its own process, so its own, empty, MemoryStore
        print("MOCK=1: this worker sees only its own in-memory store (see MOCK.md)", flush=True)
    while True:
        try:
            runs = pending_runs(store)
        except errors.StoreUnavailableError as error:  # a worker outlives a database restart
            print(f"store unavailable: {error}", file=sys.stderr, flush=True)
            if args.once:
                return 1
        else:
            print(f"{len(runs)} pending run(s)", flush=True)
            for run in runs:
                print(f"  {run.id}  session {run.session_id}  {run.input[:60]!r}", flush=True)
        if args.once:
            return 0
        time.sleep(args.interval)


if __name__ == "__main__":
    raise SystemExit(main())
