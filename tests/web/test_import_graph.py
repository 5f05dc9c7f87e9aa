"""The dashboard's modules import each other in one direction: no module imports one that
imports it back, not even for type checking only."""

from __future__ import annotations

from labs.trees.finding import REPO_ROOT
from tests.support.imports import cycles, import_graph

WEB = REPO_ROOT / "web"


def test_the_graph_sees_the_bench_importing_the_demo_executor() -> None:
    """The reader of imports works: bench.py imports demo.py (a sample it must see)."""
    graph = import_graph(WEB)
    assert "web.demo" in graph["web.bench"]
    assert "web.forms" in graph["web.views.run_actions"]  # from .. import forms


def test_no_dashboard_module_imports_one_that_imports_it_back() -> None:
    """No import cycles in web/ (the package's own __init__ aside, which starts the app)."""
    graph = {m: deps - {"web"} for m, deps in import_graph(WEB).items()}
    assert cycles(graph) == []
