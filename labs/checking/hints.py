"""Pointing a failed check at the line to edit: the TODO(check N) marker."""

from __future__ import annotations

import re
from dataclasses import dataclass

from labs.trees.finding import Tree

MARKER = re.compile(r"#\s*(TODO|SOLUTION)\(check (\d)\):?\s*(.*)")


@dataclass(frozen=True)
class Hint:
    """A file:line in the tree under test, and the instruction written there."""

    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (f"  {self.text}" if self.text else "")


def hint_for(tree: Tree, relative: str, check: int) -> Hint:
    """Find the TODO(check N) marker in one file of the tree.

    A learner may delete the marker once the code is fixed; the hint then
    names the file alone, at line 1.
    """
    path = tree.root / relative
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return Hint(tree.display_path(relative), 1, "(file missing)")
    for number, line in enumerate(lines, start=1):
        match = MARKER.search(line)
        if match and int(match.group(2)) == check:
            text = f"{match.group(1)}(check {check}): {match.group(3)}"
            return Hint(tree.display_path(relative), number, text)
    return Hint(tree.display_path(relative), 1, "")
