"""What a tree's shared/schema.py declares unique, read as text: the kit never imports a tree.

The grader asks it of a submission whose migration lacks a uniqueness: when
schema.py declares it, the migration is what is wrong (migration_flaws.py);
when it does not, the TODO in schema.py is. Only the plain forms count, the
ones the lesson's TODOs ask for and autogenerate turns into a constraint:
UniqueConstraint("a", "b"), Index("name", "a", "b", unique=True), and a
field or column given unique=True, in a class with a __tablename__.
"""

from __future__ import annotations

import ast
from pathlib import Path

SCHEMA_FILE = Path("shared") / "schema.py"


def declared_unique(source: str) -> set[tuple[str, frozenset[str]]]:
    """Each (table, columns) a class of schema.py declares unique, from its text alone."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):  # not Python, or nested beyond reading
        return set()
    found = set()
    for model in (node for node in ast.walk(module) if isinstance(node, ast.ClassDef)):
        table = table_name(model)
        if table is None:
            continue
        for statement in model.body:
            for call in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
                columns = unique_columns(call, statement)
                if columns:
                    found.add((table, frozenset(columns)))
    return found


def table_name(model: ast.ClassDef) -> str | None:
    """The class's `__tablename__ = "..."`, if it has one."""
    for statement in model.body:
        if (
            isinstance(statement, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__tablename__" for t in statement.targets)
            and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str)
        ):
            return statement.value.value
    return None


def unique_columns(call: ast.Call, statement: ast.stmt) -> list[str]:
    """The columns a call in a model's body declares unique; empty when it declares none."""
    function = call.func
    name = (
        function.attr
        if isinstance(function, ast.Attribute)
        else function.id
        if isinstance(function, ast.Name)
        else ""
    )
    strings = [
        arg.value
        for arg in call.args
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
    ]
    unique = any(
        keyword.arg == "unique"
        and isinstance(keyword.value, ast.Constant)
        and keyword.value.value is True
        for keyword in call.keywords
    )
    if name == "UniqueConstraint":
        return strings
    if name == "Index":
        return strings[1:] if unique else []
    if unique and isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]  # a field: `key: str = Field(unique=True)`
    return []
