"""python -m labs check: run the six self-checks against a tree and a store."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from labs.checking.driver import CHECK_TIMEOUT
from labs.checking.extra import EXTRA_CHECKS
from labs.checking.protocol import StoreKind
from labs.checking.report import LivePrinter, ReportLines, results_v3
from labs.checking.result import CheckResult
from labs.checking.results_json import write_results
from labs.checking.runner import draw_seed, run_checks, unknown_check_keys
from labs.grading.results import score_lines
from labs.review import self_total
from labs.term.i18n import _
from labs.trees.finding import TreeLoadError, find_tree

from . import add_tree_option


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the check command."""
    parser = commands.add_parser(
        "check",
        help=_("run the six self-checks"),
        description=_(
            "Run the six self-checks against a tree (starter, solution, or a path) "
            "on the in-memory store or on Postgres."
        ),
    )
    add_tree_option(parser)
    stores = [kind.value for kind in StoreKind]
    parser.add_argument("--store", choices=stores, default=StoreKind.MEMORY.value)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_("Postgres URL for --store postgres (default: $DATABASE_URL)"),
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help=_("also write the results as Exercism results.json v3"),
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help=_(
            "also write every result with its trace events as JSON Lines, "
            "one line per check as it finishes (what the dashboard reads)"
        ),
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help=_("print each check's calls: who called whom, what came back"),
    )
    parser.add_argument(
        "--extra",
        action="store_true",
        help=_("also run the extra checks (races, 409); never counted in the six"),
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="KEY",
        help=_(
            "run only this check: 1 to 6, or with --extra one of {keys} (repeat for more)"
        ).format(keys=", ".join(c.key for c in EXTRA_CHECKS)),
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help=_(
            "draw the checks' inputs from this seed (default: $LAB_SEED, else a fresh one; "
            "the header line prints it)"
        ),
    )
    parser.add_argument(
        "--check-timeout",
        type=float,
        default=CHECK_TIMEOUT,
        metavar="SECONDS",
        help=_(
            "fail a check that runs longer than this (default {default}); "
            "the checks after it still run"
        ).format(default=f"{CHECK_TIMEOUT:g}"),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the checks and print them; exit 0 only when all six pass, 2 on a bad --only."""
    unknown = unknown_check_keys(set(args.only), args.extra) if args.only else ""
    if unknown:
        print(_("error: --only: {problem}").format(problem=unknown), file=sys.stderr)
        return 2
    if args.check_timeout <= 0:
        print(_("error: --check-timeout must be a number of seconds above 0"), file=sys.stderr)
        return 2
    seed = draw_seed() if args.seed is None else args.seed
    printer = LivePrinter(trace=args.trace)
    others = None
    try:
        found = find_tree(args.tree)
        name = found.name
        others = self_total.start(found.root, args.store)  # the grader's verdicts on the rest
    except TreeLoadError:
        name = args.tree
    printer.header(name, args.store, seed)
    with contextlib.ExitStack() as files:
        lines = None
        if args.report:
            lines = ReportLines(files.enter_context(args.report.open("w", encoding="utf-8")))

        def finished(result: CheckResult) -> None:
            printer.result(result)
            if lines:
                lines.result(result)

        report = run_checks(
            args.tree,
            args.store,
            extra=args.extra,
            database_url=args.database_url,
            only=set(args.only) if args.only else None,
            on_result=finished,
            seed=seed,
            check_timeout=args.check_timeout,
        )
        if lines:
            lines.summary(report)
    verdicts = others.result() if others is not None else None
    printer.footer(report, score_lines({args.store: report}, args.tree, printer.width, verdicts))
    if args.json:
        write_results(results_v3(report), args.json)
    return 0 if report.ok else 1
