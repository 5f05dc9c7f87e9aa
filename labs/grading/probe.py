"""The grader's subprocess: import a submission's tree and run its checks one by one.

Run as `python -m labs.grading.probe TREE OUT --store memory --first N`. It
appends one JSON line to OUT per step and flushes each, so when the grader
kills a run that hangs (a learner's endless loop), the lines say how far it
got: whether the tree imported, which check started, which ones finished.

The learner's code runs in this process, so it could replace the functions
that run and report the checks. As a cheap guard (not a sandbox), the probe
notes the lab kit's own functions before importing the tree and checks they
are still the same objects, with the same code, after the import and before
every result it reports; if not, it reports the run as tampered and stops.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from typing import TextIO

from .. import checks, report, runner, trace, trees
from ..report import results_v3
from ..runner import run_checks
from ..trees import TreeLoadError, load_tree

# (the object, its code object if it is a function): the same object with new code is a swap too.
Original = tuple[object, object]


def emit(stream: TextIO, **entry: object) -> None:
    """Append one event and flush it past any buffering."""
    stream.write(json.dumps(entry) + "\n")
    stream.flush()
    os.fsync(stream.fileno())


def kit() -> dict[str, object]:
    """The lab kit's objects that run, judge and report the checks, by dotted name."""
    found: dict[str, object] = {
        "labs.runner.run_checks": runner.run_checks,
        "labs.runner.CheckResult": runner.CheckResult,
        "labs.checks.CHECKS": checks.CHECKS,
        "labs.checks.expect": checks.expect,
        "labs.checks.CheckFailed": checks.CheckFailed,
        "labs.report.results_v3": report.results_v3,
        "labs.trace.TracingStore": trace.TracingStore,
        "labs.trace.TracingClient": trace.TracingClient,
        "labs.trees.load_tree": trees.load_tree,
        "json.dumps": json.dumps,
    }
    for check in checks.CHECKS:
        found[f"labs.checks.CHECKS[{check.number}]"] = check
        found[f"labs.checks.CHECKS[{check.number}].run"] = check.run
    for name in ("emit", "probe", "run_checks", "results_v3", "load_tree"):
        found[f"labs.grading.probe.{name}"] = globals()[name]
    return found


def snapshot() -> dict[str, Original]:
    """The kit as it is now: each object and its code, kept alive so ids cannot be reused."""
    return {name: (obj, getattr(obj, "__code__", None)) for name, obj in kit().items()}


def replaced(before: dict[str, Original]) -> list[str]:
    """The names whose object or code is no longer the one noted before the tree was imported."""
    now = snapshot()
    return sorted(
        name
        for name in before.keys() | now.keys()
        if name not in before
        or name not in now
        or now[name][0] is not before[name][0]
        or now[name][1] is not before[name][1]
    )


def probe(
    tree_path: str, out: TextIO, store: str, first: int, last: int, database_url: str | None
) -> None:
    """Import the tree, then run checks first..last, reporting each as it goes."""
    before, report_event = snapshot(), emit  # noted before any of the learner's code runs
    try:
        tree = load_tree(tree_path)
    except TreeLoadError as error:
        emit(out, event="import-failed", error=str(error))
        return
    if changed := replaced(before):
        report_event(out, event="tampered", replaced=changed)
        return
    emit(out, event="imported")
    for number in range(first, last + 1):
        emit(out, event="started", check=number)
        outcome = run_checks(tree, store, database_url=database_url, only={str(number)})
        if changed := replaced(before):
            report_event(out, event="tampered", replaced=changed)
            return
        if outcome.error:
            emit(out, event="store-failed", error=outcome.error)
            return
        tests = results_v3(outcome)["tests"]
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
