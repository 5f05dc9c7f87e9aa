"""How big a tree is, as its budget counts it: every line of every .py file."""

from __future__ import annotations

import ast
from pathlib import Path

BUDGET = 1000  # lines of Python per tree, blank and comment lines included
KIT_PACKAGES = ("labs", "web")  # what a tree must never import


def python_files(root: Path) -> list[Path]:
    """Every .py file of the tree, caches left out, in path order."""
    return sorted(path for path in root.rglob("*.py") if "__pycache__" not in path.parts)


def lines_in(path: Path) -> int:
    """Every line of the file, blank and comment lines included."""
    return len(path.read_text(encoding="utf-8").splitlines())


def tree_sizes(root: Path) -> dict[str, int]:
    """Lines per file, by path relative to the tree (forward slashes)."""
    return {path.relative_to(root).as_posix(): lines_in(path) for path in python_files(root)}


def kit_imports(root: Path) -> list[str]:
    """Every place a tree's module imports the lab kit, as `file:line name`.

    Import statements at any depth, and importlib.import_module / __import__ called
    with a literal name: the tree may name the kit as a program to run, never import it.
    """
    found = []
    for path in python_files(root):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Call) and node.args:
                called = node.func.attr if isinstance(node.func, ast.Attribute) else None
                called = called or (node.func.id if isinstance(node.func, ast.Name) else None)
                first = node.args[0]
                if called in ("import_module", "__import__") and isinstance(first, ast.Constant):
                    names = [str(first.value)]
            relative = path.relative_to(root).as_posix()
            found += [
                f"{relative}:{getattr(node, 'lineno', 0)} {name}"
                for name in names
                if name.split(".")[0] in KIT_PACKAGES
            ]
    return found
