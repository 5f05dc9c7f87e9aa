"""Reading a migration script without running it: the unique constraints its upgrade() makes.

Without a database the learner's scripts are read, never imported (they
are the learner's code): an AST walk finds create_table's UniqueConstraint,
Column(unique=True) and Index(unique=True), create_unique_constraint and
create_index(unique=True), leaving out partial (WHERE) indexes.
"""

from __future__ import annotations

import ast
from pathlib import Path

from labs.lesson.uniqueness import UNIQUENESSES


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _strings(nodes: list[ast.expr]) -> list[str]:
    values = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            values.append(node.value)
        elif isinstance(node, ast.List | ast.Tuple):
            values.extend(_strings(list(node.elts)))
    return values


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _arg(call: ast.Call, index: int) -> ast.expr | None:
    return call.args[index] if len(call.args) > index else None


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _partial(call: ast.Call) -> bool:
    """A WHERE clause on an index (postgresql_where=...) makes it partial: not a uniqueness."""
    return any(k.arg and k.arg.endswith("_where") for k in call.keywords)


def constraints_in(source: str) -> set[tuple[str, tuple[str, ...]]]:
    """The (table, columns) unique constraints the upgrade() of one script creates."""
    tree = ast.parse(source)
    upgrades: list[ast.AST] = [
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "upgrade"
    ]
    found: set[tuple[str, tuple[str, ...]]] = set()
    for scope in upgrades or [tree]:
        for call in (n for n in ast.walk(scope) if isinstance(n, ast.Call)):
            kind = _name(call.func)
            if kind == "create_table" and call.args:
                table = _strings(call.args[:1])
                for part in (a for a in call.args[1:] if isinstance(a, ast.Call)):
                    if _name(part.func) == "UniqueConstraint":
                        found.add((table[0] if table else "", tuple(_strings(list(part.args)))))
                    unique = _is_true(_keyword(part, "unique"))
                    if _name(part.func) == "Column" and unique and _strings(part.args[:1]):
                        found.add((table[0] if table else "", tuple(_strings(part.args[:1]))))
                    if _name(part.func) == "Index" and unique and not _partial(part):
                        # Index(name, *columns): the first argument names the index.
                        found.add((table[0] if table else "", tuple(_strings(part.args[1:]))))
            elif kind == "create_unique_constraint":
                # (constraint_name, table_name, columns), positionally or by keyword.
                table_node = _keyword(call, "table_name") or _arg(call, 1)
                columns_node = _keyword(call, "columns") or _arg(call, 2)
                if table_node is not None and columns_node is not None:
                    found.add(("".join(_strings([table_node])), tuple(_strings([columns_node]))))
            elif (
                kind == "create_index" and _is_true(_keyword(call, "unique")) and not _partial(call)
            ):
                # (index_name, table_name, columns, unique=True), like create_unique_constraint.
                table_node = _keyword(call, "table_name") or _arg(call, 1)
                columns_node = _keyword(call, "columns") or _arg(call, 2)
                if table_node is not None and columns_node is not None:
                    found.add(("".join(_strings([table_node])), tuple(_strings([columns_node]))))
    return found


def missing_constraints(files: list[Path]) -> list[str]:
    """Which of the two required unique constraints no script creates."""
    found: set[tuple[str, tuple[str, ...]]] = set()
    for path in files:
        try:
            found |= constraints_in(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
    return [
        need.label
        for need in UNIQUENESSES
        if not any(need.on(table, columns) for table, columns in found)
    ]
