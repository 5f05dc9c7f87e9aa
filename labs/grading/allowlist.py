"""What code in a region may use: plain Python, its module's imports and a few standard modules.

A region is read, never run (flags.py walks it), and judged against what it
may use rather than against the attacks we know of:

- imports: a module in ALLOWED or a public submodule of one; a module the
  shipped file imports itself (`threading` in the store); a name the shipped
  file imports from a module outside the list (`UniqueConstraint` from
  sqlalchemy); a module of the tree only when the shipped file imports it;
- a module's attributes: public names only, none of them a module outside
  the list, whether the module holds it (`typing.sys`, `uuid.os`) or takes it
  from elsewhere (`errors.os` were the tree's errors.py to import os). The
  standard modules are looked at by importing them here (they are on the
  list, or the shipped file imports them); the tree's files are read;
- a module only as the left side of a dot: never stored, passed or called,
  so no helper (`operator.attrgetter(...)(typing)`) is ever handed one;
- none of the names that fetch or run things by name or make functions out
  of code (REACHING), no dunder but `__name__` (in code, or in a string,
  where str.format would follow it), nothing inside frames and code objects;
- nothing the typecheck reads as a condition or a switch (TYPECHECK_SWITCHES):
  `if not TYPE_CHECKING:` runs code that mypy never checks.
"""

from __future__ import annotations

import ast
import functools
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from .parsing import parse

ALLOWED = frozenset(
    {
        *("__future__", "collections", "collections.abc", "datetime", "enum", "functools"),
        *("hashlib", "hmac", "itertools", "json", "re", "time", "types", "typing"),
        *("unicodedata", "uuid"),
    }
)
# Builtins that fetch attributes, import or run code by name, and the standard modules' helpers
# that do the same or make functions out of code objects: a region needs none of them.
BUILTINS_REACHING = frozenset(
    {
        *("getattr", "setattr", "delattr", "vars", "globals", "locals"),
        *("eval", "exec", "compile", "open", "breakpoint", "help", "__import__"),
    }
)
HELPERS_REACHING = frozenset(
    {
        *("attrgetter", "methodcaller", "import_module", "get_type_hints", "ForwardRef"),
        *("CodeType", "FunctionType", "LambdaType"),
    }
)
REACHING = BUILTINS_REACHING | HELPERS_REACHING
TYPECHECK_SWITCHES = frozenset(
    {"TYPE_CHECKING", "MYPY", "no_type_check", "no_type_check_decorator"}
)
INTERNALS = frozenset(
    {
        *(f"{kind}_{part}" for kind in ("gi", "cr", "ag") for part in ("frame", "code")),
        *("gi_yieldfrom", "cr_await", "ag_await", "tb_frame", "tb_next"),
        *(f"f_{part}" for part in ("globals", "locals", "builtins", "back", "code")),
    }
)
DUNDERS_ALLOWED = frozenset({"__name__"})
DUNDER_IN_TEXT = re.compile(r"__[A-Za-z]\w*?__")


@dataclass(frozen=True)
class Module:
    """A module a name can stand for: Python's (by its import name) or one of the tree's."""

    name: str
    in_tree: bool = False

    def __str__(self) -> str:
        return self.name or "the tree's package"


class OutsideError(Exception):
    """An import or an attribute that reaches outside what a region may use; says how."""


def is_dunder(name: str) -> bool:
    """__x__."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def allowed_module(name: str) -> bool:
    """A module of ALLOWED, or a public submodule of one (json.decoder)."""
    parts = name.split(".")
    if name in ALLOWED:
        return True
    public = not any(part.startswith("_") for part in parts)
    return public and any(".".join(parts[:n]) in ALLOWED for n in range(1, len(parts)))


@functools.cache
def tree_imports(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """The import statements at the top level of one of the shipped tree's files."""
    try:
        body = parse(path.read_text(encoding="utf-8")).body
    except (OSError, SyntaxError, ValueError):
        return ()
    return tuple(node for node in body if isinstance(node, ast.Import | ast.ImportFrom))


def binds(alias: ast.alias, node: ast.Import | ast.ImportFrom) -> str:
    """The name an import binds for one of its aliases (`import a.b` binds a)."""
    if isinstance(node, ast.Import) and not alias.asname:
        return alias.name.partition(".")[0]
    return alias.asname or alias.name


def imported_module(alias: ast.alias) -> Module:
    """The module `import a.b` (a) or `import a.b as c` (a.b) binds to its name."""
    return Module(alias.name if alias.asname else alias.name.partition(".")[0])


class FileRules:
    """What the regions of one file may use: its shipped imports, the tree's modules, ALLOWED."""

    def __init__(self, relative: str, shipped: list[str], tree: Path) -> None:
        self.tree = tree
        self.package = relative.removesuffix(".py").split("/")[:-1]  # shared/__init__.py too
        self.modules: set[Module] = set()  # the modules the shipped file imports
        self.names: dict[Module, set[str]] = {}  # the names it imports from each module
        self.bound: dict[str, Module] = {}  # the names of the submission's file bound to modules
        try:
            nodes = list(ast.walk(parse("\n".join(shipped))))
        except (SyntaxError, ValueError):
            nodes = []
        for node in nodes:
            if isinstance(node, ast.Import):
                self.modules.update(Module(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                try:
                    origin = self.origin(node, self.package)
                except OutsideError:
                    continue
                self.names.setdefault(origin, set()).update(alias.name for alias in node.names)
                if origin.in_tree:  # the tree's modules count whole; others by the names taken
                    for alias in node.names:
                        self.modules.add(self.submodule(origin, alias.name) or origin)

    def bind(self, module: ast.Module) -> None:
        """Learn which names of the submission's file stand for modules."""
        for node in ast.walk(module):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.bound[binds(alias, node)] = imported_module(alias)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    try:
                        target = self.from_import(self.origin(node, self.package), alias.name)
                    except OutsideError:
                        continue  # flagged where it is imported
                    if target is not None:
                        self.bound[binds(alias, node)] = target

    def may_import(self, module: Module) -> bool:
        """Whether a region of this file may import the module."""
        return module in self.modules or (not module.in_tree and allowed_module(module.name))

    def origin(self, node: ast.ImportFrom, package: list[str]) -> Module:
        """The module a `from ... import` reads, a relative one found in the tree."""
        if node.level == 0:
            return Module(node.module or "")
        if node.level - 1 > len(package):
            raise OutsideError("imports from outside the tree")
        base = package[: len(package) - (node.level - 1)]
        return Module(".".join([*base, *(node.module or "").split(".")]).strip("."), True)

    def tree_file(self, module: Module) -> Path | None:
        """The shipped tree's file of one of its modules."""
        if not module.name:
            return self.tree / "__init__.py"
        place = self.tree.joinpath(*module.name.split("."))
        files = (place.with_suffix(".py"), place / "__init__.py")
        return next((path for path in files if path.is_file()), None)

    def submodule(self, package: Module, name: str) -> Module | None:
        """package.name when that is a module of the tree."""
        sub = Module(f"{package.name}.{name}".strip("."), True)
        return sub if self.tree_file(sub) is not None else None

    def from_import(self, origin: Module, name: str) -> Module | None:
        """What `from origin import name` gives: a module, or None for anything else."""
        if origin.in_tree:
            sub = self.submodule(origin, name)
            if sub is not None:
                if sub in self.modules:
                    return sub
                raise OutsideError(f"imports {sub}")
            if origin in self.modules:
                return self.attribute(origin, name)
            raise OutsideError(f"imports {origin}")
        if self.may_import(origin):
            return self.attribute(origin, name)
        if name in self.names.get(origin, set()):
            return None  # a name the shipped file imports from there: the lesson's own
        taken = f"{origin}.{name}" if origin in self.names else str(origin)
        raise OutsideError(f"imports {taken}")

    def attribute(self, module: Module, name: str) -> Module | None:
        """module.name: the module it is, or None when it is something else."""
        if is_dunder(name):
            return None  # flagged as a dunder
        if name.startswith("_"):
            raise OutsideError(f"reaches the private name {module}.{name}")
        if module.in_tree:
            return self.tree_attribute(module, name)
        if not self.may_import(module):
            raise OutsideError(f"reaches {module}.{name}")
        try:
            value = vars(importlib.import_module(module.name)).get(name)
        except ImportError:
            return None
        if not isinstance(value, ModuleType):
            return None
        found = Module(value.__name__)
        if not self.may_import(found):
            raise OutsideError(f"reaches the module {found} through {module}")
        return found

    def tree_attribute(self, module: Module, name: str) -> Module | None:
        """module.name for a module of the tree, judged by what its shipped file binds there."""
        path = self.tree_file(module)
        if path is None:
            return None
        package = module.name.split(".")
        if path.name != "__init__.py":
            package = package[:-1]
        for node in tree_imports(path):
            for alias in node.names:
                if binds(alias, node) == name:
                    return self.taken_by(module, name, node, alias, package)
        sub = self.submodule(module, name)
        if sub is not None and sub not in self.modules:
            raise OutsideError(f"reaches {sub}")
        return sub

    def taken_by(
        self,
        module: Module,
        name: str,
        node: ast.Import | ast.ImportFrom,
        alias: ast.alias,
        package: list[str],
    ) -> Module | None:
        """What a module of the tree imported under name, if a region may use it."""
        try:
            if isinstance(node, ast.ImportFrom):
                return self.from_import(self.origin(node, package), alias.name)
            target = imported_module(alias)
            if not self.may_import(target):
                raise OutsideError(str(target))
            return target
        except OutsideError:
            source = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
            what = f"reaches {module}.{name}, which {module} takes from {source}"
            raise OutsideError(what) from None

    def module_of(self, node: ast.expr) -> Module | None:
        """The module a name or a dotted name stands for, if it stands for one."""
        try:
            if isinstance(node, ast.Name):
                return self.bound.get(node.id)
            if isinstance(node, ast.Attribute) and (outer := self.module_of(node.value)):
                return self.attribute(outer, node.attr)
        except OutsideError:
            pass  # flagged where the attribute is taken
        return None

    def import_problems(self, node: ast.Import | ast.ImportFrom) -> list[str]:
        """What an import brings in that a region may not use."""
        if isinstance(node, ast.Import):
            outside = [a.name for a in node.names if not self.may_import(Module(a.name))]
            return [f"imports {', '.join(outside)}"] if outside else []
        try:
            origin = self.origin(node, self.package)
        except OutsideError as error:
            return [str(error)]
        problems = []
        for alias in node.names:
            if alias.name == "*":
                problems.append(f"imports every name of {origin}")
                continue
            try:
                self.from_import(origin, alias.name)
            except OutsideError as error:
                problems.append(str(error))
        return sorted(set(problems))
