"""Running the checks against a tree and a store, and reporting the results."""

from __future__ import annotations

import inspect
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .checks import CHECKS, Check, CheckFailed, make_context
from .extra_checks import EXTRA_CHECKS, ExtraCheck
from .hints import Hint, hint_for
from .tidy import RunRecorder
from .trace import Event
from .trees import Tree, TreeLoadError, load_tree


@dataclass
class CheckResult:
    """The outcome of one check."""

    key: str  # "1" .. "6" for the six, a name for an extra check
    number: int | None
    title: str
    passed: bool
    duration_ms: float
    expected: str = ""
    got: str = ""
    hint: Hint | None = None
    events: list[Event] = field(default_factory=list)
    test_code: str = ""

    @property
    def extra(self) -> bool:
        """Extra checks are shown, never counted in the six."""
        return self.number is None

    @property
    def message(self) -> str:
        """One paragraph for a failure; empty for a pass."""
        if self.passed:
            return ""
        text = f"expected: {self.expected}\ngot:      {self.got}"
        return text + (f"\nhint:     {self.hint}" if self.hint else "")


@dataclass
class Report:
    """All results of one run of the checks."""

    tree: str
    store: str
    results: list[CheckResult]
    error: str = ""  # set when the checks could not run at all

    @property
    def six(self) -> list[CheckResult]:
        """The results that count: checks 1 to 6."""
        return [r for r in self.results if not r.extra]

    @property
    def passed(self) -> int:
        """How many of the six passed."""
        return sum(r.passed for r in self.six)

    @property
    def failed(self) -> int:
        """How many of the six failed; all six when the checks could not run."""
        if self.error:
            return len(CHECKS)
        return sum(not r.passed for r in self.six)

    @property
    def ok(self) -> bool:
        """True when every check that ran among the six passed."""
        return not self.error and self.failed == 0 and self.passed > 0


def check_keys() -> list[str]:
    """The keys --only accepts: 1..6, then the extra checks' names."""
    return [str(c.number) for c in CHECKS] + [c.key for c in EXTRA_CHECKS]


def unknown_check_keys(only: set[str], extra: bool) -> str:
    """Why some of `only` would run nothing (no such check, or an extra one without --extra)."""
    six = {str(c.number) for c in CHECKS}
    extras = {c.key for c in EXTRA_CHECKS}
    unknown = sorted(only - six - extras)
    needs_extra = sorted(only & extras) if not extra else []
    if not unknown and not needs_extra:
        return ""
    known = (
        f"the checks are {', '.join(sorted(six))}, and the extra checks "
        f"{', '.join(c.key for c in EXTRA_CHECKS)} (with --extra)"
    )
    if unknown:
        return f"no check {', '.join(repr(k) for k in unknown)}: {known}"
    return f"{', '.join(needs_extra)} is an extra check: add --extra to run it"


def open_store(tree: Tree, store_kind: str, database_url: str | None) -> Any:
    """Make a store of the tree's own kind: memory, or postgres at database_url."""
    infra = tree.module("infra")
    if store_kind == "memory":
        return infra.MemoryStore()
    if not database_url:
        raise TreeLoadError("--store postgres needs DATABASE_URL (or --database-url)")
    return infra.make_store(
        {"DATABASE_URL": database_url, "DB_SCHEMA": os.environ.get("DB_SCHEMA", tree.package)}
    )


def run_one(tree: Tree, store_kind: str, store: Any, check: Check | ExtraCheck) -> CheckResult:
    """Run one check in a fresh tracing context and time it."""
    number = check.number if isinstance(check, Check) else None
    key = check.key if isinstance(check, ExtraCheck) else str(check.number)
    result = CheckResult(
        key,
        number,
        check.title,
        passed=False,
        duration_ms=0.0,
        test_code=inspect.getsource(check.run),
    )
    started = time.perf_counter()
    ctx = None
    try:
        ctx = make_context(tree, store_kind, store)
        check.run(ctx)
        result.passed = True
    except CheckFailed as failure:
        result.expected, result.got, result.hint = failure.expected, failure.got, failure.hint
    except Exception as error:  # a learner's code may fail in any way: report, don't crash
        result.expected = "the check to run to the end"
        result.got = f"{type(error).__name__}: {error}"
        result.hint = _hint_from_traceback(tree, error) or hint_for(
            tree, check.default_hint, number or 3
        )
    result.duration_ms = (time.perf_counter() - started) * 1000
    if ctx is not None:
        result.events = list(ctx.trace.events)
    return result


def _hint_from_traceback(tree: Tree, error: BaseException) -> Hint | None:
    """Point at the deepest frame inside the tree, where the learner's code failed."""
    root = str(tree.root)
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if frame.filename.startswith(root):
            relative = os.path.relpath(frame.filename, root)
            return Hint(tree.display_path(relative), frame.lineno or 1, "")
    return None


def run_checks(
    tree: Tree,
    store_kind: str = "memory",
    *,
    extra: bool = False,
    database_url: str | None = None,
    only: set[str] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
) -> Report:
    """Run the six checks (and the extra ones if asked) against a tree and a store.

    Memory checks get a fresh store each; Postgres checks share one store and
    keep apart by creating their own sessions. on_result hears each result as
    soon as it exists, so a reader learns which check hung if the run never ends.
    A set of keys in `only` that names no check gives a report saying so.
    """
    unknown = unknown_check_keys(only, extra) if only else ""
    if unknown:
        return Report(tree.name, store_kind, [], error=unknown)
    try:
        shared_store = None
        if store_kind != "memory":
            shared_store = open_store(tree, store_kind, database_url)
            shared_store.ping()
    except Exception as error:
        return Report(tree.name, store_kind, [], error=str(error) or type(error).__name__)
    checks: list[Check | ExtraCheck] = list(CHECKS) + (list(EXTRA_CHECKS) if extra else [])
    results = []
    for check in checks:
        key = check.key if isinstance(check, ExtraCheck) else str(check.number)
        if only and key not in only:
            continue
        if shared_store is None:
            results.append(run_one(tree, store_kind, open_store(tree, store_kind, None), check))
        else:
            recorder = RunRecorder(shared_store)  # see tidy.py: repeatable on one database
            results.append(run_one(tree, store_kind, recorder, check))
            recorder.cancel_left_pending(tree)
        if on_result is not None:
            on_result(results[-1])
    if shared_store is not None and hasattr(shared_store, "close"):
        shared_store.close()
    return Report(tree.name, store_kind, results)


def load_report(tree_spec: str, store_kind: str = "memory", **options: Any) -> Report:
    """Import a tree by name or path and run the checks; an import failure fails all six."""
    try:
        tree = load_tree(tree_spec)
    except TreeLoadError as error:
        return Report(tree_spec, store_kind, [], error=f"the tree does not import: {error}")
    return run_checks(tree, store_kind, **options)
