"""The dashboard's state: one bench per tree, the last check run per tree and store, and
which heavy jobs are going."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from flask import abort, current_app

from labs.checking.api import StoreKind

from .checkruns.check_run import CheckRun
from .i18n import _
from .safety.jobs import HeavyJobs
from .workbench.workbench import Workbench


class Lab:
    """Everything the views share, created once per app."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.trees: dict[str, str] = dict(config["TREES"])
        self.database_url: str | None = config["DATABASE_URL"]
        self.check_timeout: float = config["CHECK_TIMEOUT"]
        self.check_each_timeout: float = config["CHECK_EACH_TIMEOUT"]
        self.demo_pace: float = config["DEMO_PACE"]
        self.demo_chunks: int = config["DEMO_CHUNKS"]
        self.runs_timeout: float = config["RUNS_TIMEOUT"]
        self.runs_start_timeout: float = config["RUNS_START_TIMEOUT"]
        self.check_runs: dict[tuple[str, str], CheckRun] = {}
        # One race and one check run at a time: a second one is told the dashboard is busy.
        self.jobs = HeavyJobs()
        self._benches: dict[str, Workbench] = {}
        self._lock = threading.Lock()

    @property
    def stores(self) -> list[StoreKind]:
        """The stores the checks can run on here: postgres only when configured."""
        return list(StoreKind) if self.database_url else [StoreKind.MEMORY]

    def tree_spec(self, name: str) -> str:
        """Return what to import for a tree name, or answer 404 naming the choices."""
        if name not in self.trees:
            abort(
                404,
                _(
                    "no tree named {name}: choose one of {choices}",
                    name=repr(name),
                    choices=", ".join(self.trees),
                ),
            )
        return self.trees[name]

    def bench(self, name: str) -> Workbench:
        """Return the tree's bench, opening it (and its store) on first use."""
        spec = self.tree_spec(name)
        with self._lock:
            if name not in self._benches:
                self._benches[name] = Workbench(
                    name,
                    spec,
                    self.database_url,
                    pace=self.demo_pace,
                    chunks=self.demo_chunks,
                    timeout=self.runs_timeout,
                    start_timeout=self.runs_start_timeout,
                )
            return self._benches[name]

    def close(self) -> None:
        """Stop every check run, demo executor and store (threads and pools end with the app)."""
        for run in list(self.check_runs.values()):
            run.stop()
        with self._lock:
            benches = list(self._benches.values())
            self._benches.clear()
        for bench in benches:
            bench.close()


def lab() -> Lab:
    """The current app's Lab."""
    found: Lab = current_app.extensions["mini_koda_lab"]
    return found
