"""The graded copy of a submission: its region bodies spliced into the shipped starter.

A learner's score comes from what they wrote inside the TODO regions. So
when a submission differs from the starter outside its regions, the grader
grades a copy of the shipped starter with the submission's region bodies put
in, and an edit outside the regions (a patched kit call, a rewritten check
helper, a deleted file) cannot raise the score. Nothing else of the
submission comes along: not a file it added (a module a region would import
the answers from), not a `migrations/` folder inside the tree, which
Alembic never reads (the migration lives beside the tree, migration.py, and
runs from there). edits.py lists each such file for the instructor.

One kind of edit outside the regions is honest and common: an import the
region needs, written at the top of the file where imports belong. Such
top-level `import x` / `from x import y` statements are carried into the
copy, after the starter's own imports, so they cost nothing.

The copy is also what the typecheck reads, so nothing in it may steer mypy
but code: stub files and py.typed markers are left out of the learner's own
folders, and a `# mypy:` line inside a region is kept only as a comment mypy
does not read (flags.py names it for review).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from labs.trees.finding import tree_root
from labs.trees.regions import (
    RegionError,
    copy_tree,
    parse_regions,
    read_lines,
    regions_by_file,
)

from .parsing import parse

# mypy reads `# mypy: ...` at the start of a line as settings for the file.
MYPY_LINE = re.compile(r"^(\s*)#\s*mypy:")
NOT_READ = r"\1# (not read by mypy when grading):"


def splice(submission: Path, destination: Path, shipped: Path | None = None) -> list[str]:
    """Write the spliced copy at destination; return the files whose regions did not match."""
    original = shipped or tree_root("starter")
    copy_tree(original, destination)
    unmatched = []
    for relative, regions in regions_by_file(original).items():
        theirs_path = submission / relative
        theirs = read_lines(theirs_path) if theirs_path.is_file() else []
        try:
            their_regions = parse_regions(relative, theirs)
        except RegionError:
            their_regions = []
        if [r.check for r in their_regions] != [r.check for r in regions]:
            unmatched.append(relative)  # markers moved or lost: the shipped bodies stay
            continue
        lines = read_lines(original / relative)
        for mine, their in reversed(list(zip(regions, their_regions, strict=True))):
            body = [MYPY_LINE.sub(NOT_READ, line) for line in their.body_lines]
            lines[mine.start : mine.end - 1] = body
        lines = with_imports(lines, added_imports(theirs, read_lines(original / relative)))
        (destination / relative).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return unmatched


def top_level_imports(lines: list[str]) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each module-level import outside any region."""
    try:
        module = parse("\n".join(lines))
        inside = {n for r in parse_regions("file", lines) for n in range(r.start, r.end + 1)}
    except (SyntaxError, RegionError, ValueError):
        return []
    found = []
    for node in module.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and node.end_lineno is not None:
            span = range(node.lineno, node.end_lineno + 1)
            if not inside.intersection(span):
                text = "\n".join(lines[node.lineno - 1 : node.end_lineno])
                found.append((node.lineno, node.end_lineno, text))
    return found


def added_imports(theirs: list[str], shipped: list[str]) -> list[str]:
    """The submission's top-level imports that the shipped file does not have."""
    have = {text for _, _, text in top_level_imports(shipped)}
    return [text for _, _, text in top_level_imports(theirs) if text not in have]


def with_imports(lines: list[str], imports: list[str]) -> list[str]:
    """The lines with imports added after the file's last top-level import (or its top)."""
    if not imports:
        return lines
    existing = top_level_imports(lines)
    at = max((last for _, last, _ in existing), default=0)
    if not existing:  # after a module docstring and `from __future__` lines, if any
        at = docstring_end(lines)
    added = [line for text in imports for line in text.splitlines()]
    return [*lines[:at], *added, *lines[at:]]


def docstring_end(lines: list[str]) -> int:
    """The line after the module's docstring, or 0."""
    try:
        body = parse("\n".join(lines)).body
    except SyntaxError:
        return 0
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        return first.end_lineno or 0
    return 0
