"""Finding and importing a lab tree: starter/, solution/, or a learner's copy.

The checks reach a tree only through its public surface, so any directory
with the starter's layout can be checked, whatever its package is called.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

REPO_ROOT = Path(__file__).resolve().parents[2]
TREE_NAMES = ("starter", "solution")
SUBPACKAGES = ("shared", "infra", "gateway", "worker")


class TreeLoadError(Exception):
    """The tree could not be imported (missing files, syntax errors, import errors)."""


@dataclass(frozen=True)
class Tree:
    """An imported tree: its display name, package name and directory."""

    name: str
    package: str
    root: Path

    def module(self, dotted: str) -> ModuleType:
        """Import and return <tree>.<dotted>, e.g. tree.module("shared.keys")."""
        return importlib.import_module(f"{self.package}.{dotted}")

    def display_path(self, relative: str) -> str:
        """Return the path of a file of the tree as a learner would type it."""
        path = self.root / relative
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)


def tree_root(spec: str) -> Path:
    """Return the directory of a tree given by name (starter, solution) or path."""
    if spec in TREE_NAMES:
        return REPO_ROOT / spec
    return Path(spec).resolve()


def package_for(root: Path) -> str:
    """The name a tree is imported under: starter or solution for the repository's own, else
    a name made from its path, so two copies of the starter never share modules."""
    for name in TREE_NAMES:
        if root == REPO_ROOT / name:
            return name
    return "labtree_" + hashlib.sha1(str(root).encode()).hexdigest()[:10]


def find_tree(spec: str | Path) -> Tree:
    """Locate a tree by name or by path without importing any of it, or raise TreeLoadError."""
    root = tree_root(str(spec))
    if not root.exists():
        raise TreeLoadError(f"{root} does not exist: give starter, solution, or a tree's path")
    if not root.is_dir():
        raise TreeLoadError(f"{root} is a file, not a lab tree's folder")
    if not (root / "__init__.py").is_file():
        raise TreeLoadError(f"{root} is not a lab tree: it has no __init__.py")
    package = package_for(root)
    return Tree(name=package if package in TREE_NAMES else root.name, package=package, root=root)


def import_tree(tree: Tree) -> None:
    """Import the tree's package (by path) and its four subpackages, or raise TreeLoadError.

    Each tree declares its tables on SQLModel, with the same names as every other
    tree's; imported here, a tree's tables get a SQLAlchemy registry of their own, so
    two trees can live in one process. Their metadata is then `Model.__table__.metadata`
    (`Model.metadata` names SQLModel's default one).
    """
    with _own_registry():
        if tree.package not in TREE_NAMES or tree.package not in sys.modules:
            _register_package(tree.package, tree.root)
        try:
            for sub in SUBPACKAGES:
                importlib.import_module(f"{tree.package}.{sub}")
        except Exception as error:  # a learner's tree may fail in any way
            raise TreeLoadError(f"{type(error).__name__}: {error}") from error


@contextmanager
def _own_registry() -> Iterator[None]:
    """While inside, tables declared on SQLModel go into a fresh registry and metadata."""
    from sqlalchemy.orm import registry
    from sqlmodel import SQLModel

    saved = SQLModel._sa_registry, SQLModel.metadata
    fresh = registry()
    SQLModel._sa_registry, SQLModel.metadata = fresh, fresh.metadata
    try:
        yield
    finally:
        SQLModel._sa_registry, SQLModel.metadata = saved


def import_package(tree: Tree) -> None:
    """Import the tree's package alone (by path), not its subpackages; TreeLoadError if it fails."""
    if tree.package not in TREE_NAMES or tree.package not in sys.modules:
        _register_package(tree.package, tree.root)


def load_tree(spec: str) -> Tree:
    """Import a tree by name or by path, or raise TreeLoadError saying why.

    Neither the checks nor the dashboard import a tree in their own process
    (they talk to a host: labs/checking/host.py); tests that read a tree's
    tables do.
    """
    tree = find_tree(spec)
    import_tree(tree)
    return tree


def _register_package(package: str, root: Path) -> None:
    if package in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        package, root / "__init__.py", submodule_search_locations=[str(root)]
    )
    if spec is None or spec.loader is None:
        raise TreeLoadError(f"cannot import {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[package]
        raise TreeLoadError(f"{type(error).__name__}: {error}") from error
