"""What pybabel extracts from the checks' modules besides their _() and N_() calls.

A check says what it does in the first paragraph of its function's docstring
(driver.what_it_does shows it translated, in results.json's test_code and the
report), so that paragraph is a message too. babel.cfg names this extractor
for labs/checking/checks/ and extra.py: it yields what Babel's Python
extractor finds, then the docstring of each function made a check there
(`@check(...)` over it, or named in an `ExtraCheck(...)`).
"""

from __future__ import annotations

import ast
import io
from collections.abc import Collection, Iterator, Mapping
from typing import IO, TYPE_CHECKING

from babel.messages.extract import extract_python

from .definition import first_paragraph

if TYPE_CHECKING:
    from babel.messages.extract import _Keyword, _PyOptions

# What Babel's extractors yield: (line, function, message, comments).
Message = tuple[object, ...]


def extract(
    fileobj: IO[bytes],
    keywords: Mapping[str, _Keyword],
    comment_tags: Collection[str],
    options: _PyOptions,
) -> Iterator[Message]:
    """Babel's Python messages of the module, then its checks' first docstring paragraphs."""
    source = fileobj.read()
    yield from extract_python(io.BytesIO(source), keywords, comment_tags, options)
    tree = ast.parse(source)
    extras = {
        node.args[2].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "ExtraCheck"
        and len(node.args) > 2
        and isinstance(node.args[2], ast.Name)
    }
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if node.name in extras or any(is_check(decorator) for decorator in node.decorator_list):
            said = first_paragraph(ast.get_docstring(node) or "")
            if said:
                yield node.body[0].lineno, "_", said, []


def is_check(decorator: ast.expr) -> bool:
    """`@check(...)`."""
    return (
        isinstance(decorator, ast.Call)
        and isinstance(decorator.func, ast.Name)
        and decorator.func.id == "check"
    )
