"""The grader's subprocess: import a submission's tree and run its checks one by one.

Run as `python -m labs.grading.probe TREE OUT --store memory --first N`. It
appends one JSON line to OUT per step and flushes each, so when the grader
kills a run that hangs (a learner's endless loop), the lines say how far it
got: whether the tree imported, which check started, which ones finished.

The learner's code runs in this process, so it could replace the functions
that run and report the checks. As a guard (not a proof), the probe notes
the lab kit's state before importing the tree (every name bound in a labs
module, every attribute of its classes, every function's code and defaults)
and checks it is unchanged after the import and before every result it
reports; if not, it reports the run as tampered and stops. The process
itself runs in the submission's sandbox (labs/sandbox.py). It still shares
its memory with the learner's code: a submission that writes its own events
and exits can only be stopped by running the checks outside the tree's
process (the driver and tree host that replace this probe).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import types
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


def kit_state() -> dict[str, object]:
    """Every name bound in the lab kit's modules, every class attribute, every function's code.

    A learner's code replacing a module's function, a class's method or
    attribute (`CheckResult.passed = property(...)`), or a function's code
    or defaults, changes one of these objects.
    """
    state: dict[str, object] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "labs" or module_name.startswith("labs.")):
            continue
        for name, value in list(vars(module).items()):
            where = f"{module_name}.{name}"
            state[where] = value
            if isinstance(value, type) and value.__module__ == module_name:
                for attribute, member in list(vars(value).items()):
                    state[f"{where}.{attribute}"] = member
                    state.update(function_parts(f"{where}.{attribute}", member))
            state.update(function_parts(where, value))
    return state


def function_parts(where: str, value: object) -> dict[str, object]:
    """A function's code, defaults and keyword defaults, which can be swapped in place."""
    if not isinstance(value, types.FunctionType):
        return {}
    return {
        f"{where}.__code__": value.__code__,
        f"{where}.__defaults__": value.__defaults__,
        f"{where}.__kwdefaults__": value.__kwdefaults__,
    }


def snapshot() -> dict[str, Original]:
    """The kit as it is now: each object and its code, kept alive so ids cannot be reused."""
    found = {name: (obj, getattr(obj, "__code__", None)) for name, obj in kit().items()}
    found |= {f"state:{name}": (obj, None) for name, obj in kit_state().items()}
    return found


def replaced(before: dict[str, Original]) -> list[str]:
    """The names whose object or code is no longer the one noted before the tree was imported.

    A name that appears later counts too, except a module's own dunder names
    (Python adds some, such as __warningregistry__) and submodules imported later.
    """
    now = snapshot()
    changed = {
        name.removeprefix("state:")
        for name in before.keys() | now.keys()
        if (name not in before and not harmless(name, now[name][0]))
        or (
            name in before
            and (
                name not in now
                or now[name][0] is not before[name][0]
                or now[name][1] is not before[name][1]
            )
        )
    }
    return sorted(changed)


def harmless(name: str, value: object) -> bool:
    """A name added to a kit module by Python itself rather than by a learner."""
    last = name.rsplit(".", 1)[-1]
    if isinstance(value, types.ModuleType):
        return True
    return last in ("__warningregistry__", "__annotations__") or (
        last.startswith("__") and last.endswith("__") and name.count(".") <= 2
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
