"""Starter against solution, hunk by hunk, each hunk under the check it serves.

One implementation for every view of the diff: `python -m labs diff` renders
it for a terminal, the dashboard's diff view renders the same hunks as HTML.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .finding import tree_root
from .regions import paired, regions_by_file


@dataclass(frozen=True)
class Hunk:
    """What the learner changes in one marked region, starter against solution."""

    check: int  # the N of TODO(check N) this hunk serves
    path: str  # relative to the tree root, e.g. "shared/keys.py"
    starter_line: int  # 1-based line of the TODO marker in starter/
    solution_line: int  # 1-based line of the SOLUTION marker in solution/
    instruction: str  # the one-line instruction after the tag
    lines: list[tuple[str, str]]  # (op, text): "-" starter only, "+" solution only, " " both

    @property
    def added(self) -> int:
        """Lines only the solution has."""
        return sum(op == "+" for op, _ in self.lines)

    @property
    def removed(self) -> int:
        """Lines only the starter has."""
        return sum(op == "-" for op, _ in self.lines)


def body_diff(starter: list[str], solution: list[str]) -> list[tuple[str, str]]:
    """The lines of two region bodies as (op, text), in reading order."""
    lines: list[tuple[str, str]] = []
    matcher = difflib.SequenceMatcher(a=starter, b=solution, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            lines.extend((" ", text) for text in starter[a0:a1])
            continue
        lines.extend(("-", text) for text in starter[a0:a1])
        lines.extend(("+", text) for text in solution[b0:b1])
    return lines


def tree_diff(starter: Path | None = None, solution: Path | None = None) -> dict[int, list[Hunk]]:
    """Every region's hunk, grouped by check number in ascending order.

    Defaults to the repository's starter/ and solution/. Regions are paired
    file by file in order; a region without a partner is the drift guard's
    business, not the diff's, and is left out here.
    """
    starter_root = starter or tree_root("starter")
    solution_root = solution or tree_root("solution")
    solution_regions = regions_by_file(solution_root)
    by_check: dict[int, list[Hunk]] = {}
    for relative, regions in regions_by_file(starter_root).items():
        for mine, theirs in paired(regions, solution_regions.get(relative, [])):
            hunk = Hunk(
                mine.check,
                relative,
                mine.start,
                theirs.start,
                mine.instruction,
                body_diff(list(mine.body_lines), list(theirs.body_lines)),
            )
            by_check.setdefault(mine.check, []).append(hunk)
    return {
        check: sorted(by_check[check], key=lambda h: (h.path, h.starter_line))
        for check in sorted(by_check)
    }
