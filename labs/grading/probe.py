"""The grader's subprocess: import a submission's tree and run its checks one by one.

Run as `python -m labs.grading.probe TREE OUT --store memory --first N`. It
appends one JSON line to OUT per step and flushes each, so when the grader
kills a run that hangs (a learner's endless loop), the lines say how far it
got: whether the tree imported, which check started, which ones finished.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from typing import TextIO

from ..report import results_v3
from ..runner import run_checks
from ..trees import TreeLoadError, load_tree


def emit(stream: TextIO, **entry: object) -> None:
    """Append one event and flush it past any buffering."""
    stream.write(json.dumps(entry) + "\n")
    stream.flush()
    os.fsync(stream.fileno())


def probe(
    tree_path: str, out: TextIO, store: str, first: int, last: int, database_url: str | None
) -> None:
    """Import the tree, then run checks first..last, reporting each as it goes."""
    try:
        tree = load_tree(tree_path)
    except TreeLoadError as error:
        emit(out, event="import-failed", error=str(error))
        return
    emit(out, event="imported")
    for number in range(first, last + 1):
        emit(out, event="started", check=number)
        report = run_checks(tree, store, database_url=database_url, only={str(number)})
        if report.error:
            emit(out, event="store-failed", error=report.error)
            return
        tests = results_v3(report)["tests"]
        assert isinstance(tests, list)
        for test in tests:
            emit(out, event="result", check=number, test=test)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and probe; the learner's own prints are swallowed."""
    parser = argparse.ArgumentParser(prog="python -m labs.grading.probe")
    parser.add_argument("tree")
    parser.add_argument("out")
    parser.add_argument("--store", default="memory")
    parser.add_argument("--first", type=int, default=1)
    parser.add_argument("--last", type=int, default=6)
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    with open(args.out, "a", encoding="utf-8") as out, contextlib.redirect_stdout(io.StringIO()):
        probe(args.tree, out, args.store, args.first, args.last, args.database_url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
