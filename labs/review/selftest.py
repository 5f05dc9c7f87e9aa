"""SELFTEST=1 python -m <tree>: the six checks for that tree, on the store the environment picks.

The tree's __main__ hands over to `python -m labs selftest <its folder>`
(labs/commands/selftest.py), which calls selftest() here. The same driver as
`python -m labs check`: the tree runs in a host process, the verdicts are
decided here. LAB_SEED=N repeats a run's inputs; TRACE=1 prints the calls.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

from labs.checking.launch import ForkLauncher, default_launcher
from labs.checking.protocol import Launcher, StoreKind, host_spec
from labs.term.i18n import _
from labs.trees.finding import TreeLoadError, find_tree


def selftest(root: Path) -> int:
    """Run the six checks on MOCK=1 (memory) or DATABASE_URL (postgres); 0 when all pass."""
    if os.environ.get("MOCK") == "1":
        store_kind, url = StoreKind.MEMORY, None
    elif os.environ.get("DATABASE_URL"):
        store_kind, url = StoreKind.POSTGRES, os.environ["DATABASE_URL"]
    else:
        print(
            _(
                "error: set MOCK=1 to check against the in-memory store, "
                "or DATABASE_URL=postgresql://... to check against Postgres"
            ),
            file=sys.stderr,
        )
        return 2
    try:
        tree = find_tree(str(root))
    except TreeLoadError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    launcher: Launcher = default_launcher()
    if isinstance(launcher, ForkLauncher):  # the host imports the tree while we import the checks
        launcher.prestart(host_spec(tree.root, tree.package, store_kind, url, None))
    from labs.checking.report import LivePrinter
    from labs.checking.runner import draw_seed, run_checks
    from labs.grading.results import score_lines  # what the grade would count

    from . import self_total  # the grader's verdicts on the rest, for the total

    gc.freeze()  # what is imported stays: no collection, during the checks or at exit, looks at it
    others = self_total.start(tree.root, store_kind)  # beside the checks, in a process of its own
    seed = draw_seed()
    printer = LivePrinter(trace=os.environ.get("TRACE") == "1")
    try:
        printer.header(tree.name, store_kind, seed)
        report = run_checks(
            tree,
            store_kind,
            database_url=url,
            seed=seed,
            on_result=printer.result,
            launcher=launcher,
        )
        lines = score_lines({store_kind: report}, tree.name, printer.width, others.result())
        printer.footer(report, lines)
    except BrokenPipeError:  # piped into `head`: stop printing quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0 if report.ok else 1
