"""The dashboard's modules import each other in one direction: no module imports one that
imports it back, not even for type checking only."""

from __future__ import annotations

import ast
import subprocess
import sys

from labs.trees.finding import REPO_ROOT
from tests.support.imports import cycles, import_graph

WEB = REPO_ROOT / "web"


def test_the_graph_sees_the_bench_importing_the_demo_executor() -> None:
    """The reader of imports works: bench.py imports demo.py (a sample it must see)."""
    graph = import_graph(WEB)
    assert "web.demo" in graph["web.bench"]
    assert "web.forms" in graph["web.views.run_actions"]  # from .. import forms


def test_no_dashboard_module_imports_one_that_imports_it_back() -> None:
    """No import cycles in web/ (the package's own __init__ aside, which names the app)."""
    graph = {m: deps - {"web"} for m, deps in import_graph(WEB).items()}
    assert cycles(graph) == []


def test_the_check_process_starts_without_flask_or_the_views() -> None:
    """The check child is in this package but loads none of the app: every run starts one, and
    the first row waits for it to start."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, web.check_child; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    ).stdout
    modules = set(ast.literal_eval(loaded))
    assert "web.check_child" in modules
    assert not {"flask", "web.app", "web.views", "jinja2"} & modules
