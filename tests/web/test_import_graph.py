"""The dashboard's modules import each other in one direction: no module imports one that
imports it back, not even for type checking only."""

from __future__ import annotations

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
