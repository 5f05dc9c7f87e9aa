"""Reading which of a package's modules import which, wherever the import statement stands."""

from __future__ import annotations

import ast
from pathlib import Path

from labs.trees.finding import REPO_ROOT


def module_name(path: Path) -> str:
    """web/views/checks.py -> web.views.checks; a package's __init__ is the package."""
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The modules among `modules` one file imports, at the top, in a function, or for typing."""
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


def import_graph(*folders: Path, skip: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Each module under the folders and the modules under them it imports (skip: folders left
    out)."""
    paths = sorted(
        p
        for folder in folders
        for p in folder.rglob("*.py")
        if not any(part in skip for part in p.parts)
    )
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


def package_of(module: str) -> str:
    """labs.grading.batch -> grading, labs.version -> version, web.views.runs -> web."""
    parts = module.split(".")
    return parts[0] if parts[0] != "labs" else parts[1] if len(parts) > 1 else "labs"


def upward_imports(graph: dict[str, set[str]], order: list[str]) -> list[tuple[str, str]]:
    """Each import (importer, imported) whose package stands at or after the importer's in
    `order`, between different packages; a package missing from `order` is reported too."""
    rank = {package: index for index, package in enumerate(order)}
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            mine, theirs = package_of(module), package_of(target)
            if mine == theirs:
                continue
            if rank.get(theirs, len(order)) >= rank.get(mine, -1):
                found.append((module, target))
    return found


def reaches_into(
    graph: dict[str, set[str]], importer_package: str, public: set[str]
) -> list[tuple[str, str]]:
    """Each import (importer, imported) by a module of importer_package of another package's
    module that is not its public face: the package itself (its __init__'s exports), its
    api module, or a module named in public."""

    def is_public(module: str) -> bool:
        return module in public or module.count(".") == 1 or module.endswith(".api")

    return sorted(
        (importer, imported)
        for importer, targets in graph.items()
        if package_of(importer) == importer_package
        for imported in targets
        if package_of(imported) != importer_package and not is_public(imported)
    )
