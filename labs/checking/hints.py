"""Pointing a failed check at the line to edit: the TODO(check N) marker."""

from __future__ import annotations

import re
from dataclasses import dataclass

from labs.term.i18n import _
from labs.trees.finding import Tree

MARKER = re.compile(r"#\s*(TODO|SOLUTION)\(check (\d)\):?\s*(.*)")
# A frame of a stack as faulthandler prints it, most recent call first.
FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')


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


def stuck_at(tree: Tree, stacks: str, host_root: str) -> Hint | None:
    """The deepest line of the tree in the stacks a host printed before it was stopped.

    host_root is the tree's folder as the host saw it (a sandbox copies the tree
    elsewhere); None when no frame lies inside the tree.
    """
    roots = [root.rstrip("/") + "/" for root in (host_root, str(tree.root)) if root]
    for frame in FRAME.finditer(stacks):
        path = frame.group("path")
        for root in roots:
            if path.startswith(root):
                text = _("the check was still running this line, in {function}, when stopped")
                return Hint(
                    tree.display_path(path[len(root) :]),
                    int(frame.group("line")),
                    text.format(function=frame.group("function")),
                )
    return None
