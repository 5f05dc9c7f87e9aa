"""Running the checks against a tree and a store: one Report of their results."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from labs.term.i18n import _
from labs.trees.finding import Tree, TreeLoadError, find_tree
from labs.untrusted import clean_text

from .checks import CHECKS
from .definition import Check, ExtraCheck
from .driver import CHECK_TIMEOUT, Driver
from .errors import HostError, RefusedError, TreeDoesNotImportError
from .extra import EXTRA_CHECKS
from .inputs import fresh_seed
from .protocol import Launcher, StoreKind
from .report import Report
from .result import CheckResult
from .session import START_TIMEOUT


def unknown_check_keys(only: set[str], extra: bool) -> str:
    """Why some of `only` would run nothing (no such check, or an extra one without --extra)."""
    six = {str(c.number) for c in CHECKS}
    extras = {c.key for c in EXTRA_CHECKS}
    unknown = sorted(only - six - extras)
    needs_extra = sorted(only & extras) if not extra else []
    if not unknown and not needs_extra:
        return ""
    if unknown:
        return _(
            "no check {unknown}: the checks are {six}, and the extra checks {extras} (with --extra)"
        ).format(
            unknown=", ".join(repr(k) for k in unknown),
            six=", ".join(sorted(six)),
            extras=", ".join(c.key for c in EXTRA_CHECKS),
        )
    return _("{names} is an extra check: add --extra to run it").format(
        names=", ".join(needs_extra)
    )


def draw_seed() -> int:
    """A seed for one run: LAB_SEED if set, else 64 fresh bits from `secrets` (see inputs.py)."""
    chosen = os.environ.get("LAB_SEED", "").strip()
    if chosen.isdigit():
        return int(chosen)
    return fresh_seed()


def run_checks(
    tree: Tree | str | Path,
    store_kind: str = StoreKind.MEMORY,
    *,
    extra: bool = False,
    database_url: str | None = None,
    only: set[str] | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    launcher: Launcher | None = None,
    seed: int | None = None,
    check_timeout: float = CHECK_TIMEOUT,
    schema: str | None = None,
    start_timeout: float = START_TIMEOUT,
) -> Report:
    """Run the six checks (and the extra ones if asked) against a tree and a store.

    The tree is never imported here: a host process imports it (driver.py).
    Memory checks get a fresh store each; Postgres checks share one store and
    keep apart by creating their own sessions. on_result hears each result as
    soon as it exists, so a reader sees every check that finished; on_start hears
    each check's key as it begins (the tree's host is up by then). A set of
    keys in `only` that names no check gives a report saying so. store_kind is
    a StoreKind or its value ("memory", "postgres").
    """
    store_kind = StoreKind(store_kind)
    seed = draw_seed() if seed is None else seed
    name = tree.name if isinstance(tree, Tree) else str(tree)
    unknown = unknown_check_keys(only, extra) if only else ""
    if unknown:
        return Report(name, store_kind, [], error=unknown, seed=seed)
    try:
        found = tree if isinstance(tree, Tree) else find_tree(str(tree))
    except TreeLoadError as error:
        return Report(
            name,
            store_kind,
            [],
            error=_("the tree does not import: {error}").format(error=error),
            seed=seed,
        )
    try:
        driver = Driver(
            found,
            store_kind,
            launcher=launcher,
            database_url=database_url,
            schema=schema,
            seed=seed,
            check_timeout=check_timeout,
            start_timeout=start_timeout,
        )
    except Exception as error:  # the driver's own database connection
        return Report(found.name, store_kind, [], error=clean_text(error, 400), seed=seed)
    checks: list[Check | ExtraCheck] = list(CHECKS) + (list(EXTRA_CHECKS) if extra else [])
    chosen = [check for check in checks if not only or check.key in only]
    try:
        if any(check.second_process for check in chosen):
            driver.launch_second_process()  # it imports while the first host does
        try:
            driver.check_store()
        except TreeDoesNotImportError as error:
            text = clean_text(error, 600)
            return Report(
                found.name,
                store_kind,
                [],
                error=_("the tree does not import: {error}").format(error=text),
                seed=seed,
            )
        except (RefusedError, HostError) as error:
            return Report(found.name, store_kind, [], error=clean_text(error, 600), seed=seed)
        results = []
        for check in chosen:
            if on_start is not None:
                on_start(check.key)
            result = driver.run(check, _(check.title))
            results.append(result)
            if on_result is not None:
                on_result(result)
    finally:
        driver.close()
    return Report(found.name, store_kind, results, seed=seed)
