"""The dashboard's modules import each other in one direction: no module imports one that
imports it back, not even for type checking only."""

from __future__ import annotations

import ast
from pathlib import Path

from labs.trees.finding import REPO_ROOT

WEB = REPO_ROOT / "web"


def module_name(path: Path) -> str:
    """web/views/checks.py -> web.views.checks; a package's __init__ is the package."""
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The dashboard modules one file imports, wherever the import statement stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            # `from . import forms` imports the module web.forms, not a name in web.
            found.update(f"{source}.{alias.name}" for alias in node.names)
    return {m for m in found if m in modules and m != name}


def import_graph() -> dict[str, set[str]]:
    """Each dashboard module and the dashboard modules it imports."""
    paths = sorted(WEB.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle found by a depth-first walk, each as the modules in its order."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> None:
        if module in path:
            found.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            walk(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        walk(module, [])
    return found


def test_the_graph_sees_the_bench_importing_the_demo_executor() -> None:
    """The reader of imports works: bench.py imports demo.py (a sample it must see)."""
    graph = import_graph()
    assert "web.demo" in graph["web.bench"]
    assert "web.forms" in graph["web.views.run_actions"]  # from .. import forms


def test_no_dashboard_module_imports_one_that_imports_it_back() -> None:
    """No import cycles in web/ (the package's own __init__ aside, which starts the app)."""
    graph = {m: deps - {"web"} for m, deps in import_graph().items()}
    assert cycles(graph) == []
