"""The dashboard's modules import each other in one direction: no module imports one that
imports it back, not even for type checking only."""

from __future__ import annotations

import ast
import subprocess
import sys

from labs.trees.finding import REPO_ROOT
from tests.support.imports import cycles, import_graph

WEB = REPO_ROOT / "web"


def test_the_graph_sees_the_workbench_importing_the_demo_executor() -> None:
    """The reader of imports works: workbench.py imports demo_executor.py (a sample it must see)."""
    graph = import_graph(WEB)
    assert "web.workbench.demo_executor" in graph["web.workbench.workbench"]
    assert "web.safety.forms" in graph["web.views.run_actions"]  # from ..safety import forms


def test_no_dashboard_module_imports_one_that_imports_it_back() -> None:
    """No import cycles in web/ (the package's own __init__ aside, which names the app)."""
    graph = {m: deps - {"web"} for m, deps in import_graph(WEB).items()}
    assert cycles(graph) == []


def test_the_dashboard_uses_what_the_checking_package_exports() -> None:
    """web/ imports labs.checking's names from labs.checking.api, never from the modules
    behind it, which may be split or renamed."""
    graph = import_graph(REPO_ROOT / "labs" / "checking", WEB)
    reached = {
        (module, target)
        for module, targets in graph.items()
        if module.startswith("web")
        for target in targets
        if target.startswith("labs.checking")
    }
    assert reached
    assert {target for _module, target in reached} == {"labs.checking.api"}


def test_the_check_process_starts_without_flask_or_the_views() -> None:
    """The check child is in this package but loads none of the app: every run starts one, and
    the first row waits for it to start."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, web.checkruns.check_process; print(sorted(sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    ).stdout
    modules = set(ast.literal_eval(loaded))
    assert "web.checkruns.check_process" in modules
    assert not {"flask", "web.app", "web.views", "jinja2"} & modules
