"""python -m labs bench: the accept path against the database's floor, and the split measured."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from labs.pg.scratch import ScratchDatabaseError
from labs.term.i18n import _


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the bench command."""
    parser = commands.add_parser(
        "bench",
        help=_("measure raw SQL, the store, the gateway and the split on Postgres"),
        description=_(
            "Measure (a) raw INSERT ... ON CONFLICT DO NOTHING (pgbench), (b) "
            "SqlStore.create_run, (c0) gunicorn serving an app that does nothing, (c1) the same "
            "gunicorn serving a Flask route that parses the body without the store, (c) POST "
            "/chat through gunicorn and (c-tuned) the hand-tuned POST /chat it replaced (wrk) "
            "at 1, 4 and 16 clients, (c) again at a fixed arrival rate, (d) accept latency while "
            "16 slow agent runs are in flight, in workers vs in the request handler, and the "
            "memory store's per-call cost at a small and a big size. Without pgbench or wrk, a "
            "Python load generator stands in. Runs in a scratch database it creates and drops."
        ),
    )
    parser.add_argument(
        "--quick", action="store_true", help=_("short windows: the whole run under 30 s")
    )
    parser.add_argument(
        "--json", type=Path, metavar="FILE", help=_("also write every figure as JSON to FILE")
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_(
            "a Postgres server to create the scratch database on (default: "
            "$DATABASE_URL; without one, a throwaway local cluster is started)"
        ),
    )
    parser.add_argument(
        "--tree",
        default="solution",
        choices=["solution", "starter"],
        help=_("whose gateway and store to measure (default: solution)"),
    )
    parser.add_argument(
        "--workers", type=int, default=2, help=_("gunicorn processes for (c0) to (c-tuned)")
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=8,
        help=_("gunicorn threads per process for (c0) to (c-tuned)"),
    )
    parser.add_argument(
        "--rate",
        type=float,
        metavar="PER_SECOND",
        help=_(
            "arrival rate for (c)'s open-loop row (default: half of (c)'s best closed-loop rate)"
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark, print the table, write the JSON."""
    from ..bench.model import BenchSettings
    from ..bench.report import format_report
    from ..bench.runner import run_bench

    settings = BenchSettings(
        quick=args.quick,
        tree=args.tree,
        workers=args.workers,
        threads=args.threads,
        open_rate=args.rate,
    )
    try:
        report = run_bench(
            settings,
            args.database_url,
            say=lambda line: print(f"... {line}", file=sys.stderr, flush=True),
        )
    except ScratchDatabaseError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        args.json.write_text(json.dumps(report.as_dict(), indent=2) + "\n")
        print(_("wrote {file}").format(file=args.json))
    return 0
