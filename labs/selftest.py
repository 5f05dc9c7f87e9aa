"""SELFTEST=1 python -m <tree>: the six checks for that tree, on the store the environment picks."""

from __future__ import annotations

import os
import sys

from .report import print_report
from .runner import run_checks
from .trees import tree_from_package


def selftest(package: str) -> int:
    """Run the six checks on MOCK=1 (memory) or DATABASE_URL (postgres); 0 when all pass."""
    if os.environ.get("MOCK") == "1":
        store_kind, url = "memory", None
    elif os.environ.get("DATABASE_URL"):
        store_kind, url = "postgres", os.environ["DATABASE_URL"]
    else:
        print(
            "error: set MOCK=1 to check against the in-memory store, "
            "or DATABASE_URL=postgresql://... to check against Postgres",
            file=sys.stderr,
        )
        return 2
    report = run_checks(tree_from_package(package), store_kind, database_url=url)
    try:
        print_report(report, trace=os.environ.get("TRACE") == "1")
    except BrokenPipeError:  # piped into `head`: stop printing quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0 if report.ok else 1
