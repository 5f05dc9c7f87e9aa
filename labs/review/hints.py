"""Tiered hints for one check: the idea, then where, then what the code must do.

Each call reveals the next tier and remembers it per tree (see state.py), so
a learner asks again for more. Every tier ends with the real file:line of
the check's TODO markers in the learner's own tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import wcwidth

from labs.term.columns import wrap
from labs.trees.finding import REPO_ROOT
from labs.trees.regions import OPENER, source_files

from . import state, texts

TIERS = (1, 2, 3)
TIER_FIELDS = {1: "idea", 2: "where", 3: "what"}
# A hint's prose is wrapped here at most, however wide the terminal, so it reads as a column.
PROSE_COLUMNS = 78


@dataclass(frozen=True)
class Place:
    """A line of the learner's tree a hint points at."""

    path: str  # as the learner would type it
    line: int
    text: str  # the TODO's instruction, or a note
    marked: bool = True  # a TODO marker, rather than a place to look

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" + (f"  {self.text}" if self.text else "")


def shown(path: Path) -> str:
    """A path as typed from the current folder when it lies below it, else in full."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def markers(root: Path, number: int, *, relative: bool = False) -> list[Place]:
    """Every TODO(check N) line of the tree, file by file, even where markers are unpaired.

    Paths are as the learner types them, or relative to the tree with relative=True.
    """
    found = []
    for name in source_files(root):
        if not name.endswith(".py"):
            continue
        try:
            lines = (root / name).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line_number, line in enumerate(lines, start=1):
            match = OPENER.match(line)
            if match and match["tag"] == "TODO" and int(match["check"]) == number:
                text = f"TODO(check {number}): {match['instruction']}"
                path = name if relative else shown(root / name)
                found.append(Place(path, line_number, text))
    return found


def first_line_with(path: Path, needle: str) -> int:
    """The 1-based number of the first line containing needle, or 1."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((n for n, line in enumerate(lines, start=1) if needle in line), 1)


def places(root: Path, number: int) -> list[Place]:
    """Where the hints for check N point in this tree.

    The TODO markers when the tree has them; for a check with none, the files
    the hints name; when a learner deleted a marker, the files the shipped
    starter marks, each with a note saying the marker is gone.
    """
    found = markers(root, number)
    if found:
        return found
    data = texts.load("hints")
    labels = data["labels"]
    listed = data["check"][str(number)].get("places", [])
    if listed:
        return [
            Place(shown(root / relative), first_line_with(root / relative, needle), "", False)
            for relative, needle in listed
        ]
    shipped = {place.path for place in markers(REPO_ROOT / "starter", number, relative=True)}
    return [
        Place(
            shown(root / relative),
            1,
            labels["no_marker"].format(number=number, path=shown(root / relative)),
        )
        for relative in sorted(shipped)
    ]


def tier_to_show(root: Path, number: int, level: int | None = None) -> int:
    """The tier to reveal now (the one after the last shown, or level), remembered per tree."""
    with state.editing() as data:
        seen = state.section(data, "hints", state.tree_key(root))
        last = seen.get(str(number), 0)
        last = last if isinstance(last, int) else 0
        tier = level if level is not None else min(last + 1, max(TIERS))
        seen[str(number)] = max(last, tier)
    return tier


def hint_lines(
    root: Path,
    number: int,
    tier: int,
    title: str,
    *,
    next_label: str = "next",
    width: int | None = None,
) -> list[str]:
    """The text of one tier for check N, then the places it points at, then what comes next.

    next_label names the line saying how to get the next tier ("next_key" in watch mode).
    Every line is wrapped to the terminal's width columns (at most PROSE_COLUMNS); a
    file:line is never cut, and a place's later lines start under its text.
    """
    columns = min(width, PROSE_COLUMNS) if width else PROSE_COLUMNS
    data: dict[str, Any] = texts.load("hints")
    labels = data["labels"]
    entry = data["check"][str(number)]
    label = labels[f"tier_{tier}"]
    heading = labels["heading"].format(number=number, tier=tier, label=label, title=title)
    lines = [*wrap(heading, columns, subsequent_indent="  ", break_long_words=False), ""]
    lines.append(texts.paragraph(entry[TIER_FIELDS[tier]], width=columns, indent="  "))
    lines.append("")
    for place in places(root, number):
        template = labels["marker" if place.marked else "place"]
        hang = "  " + " " * wcwidth.width(template.partition("{place}")[0])
        lines += wrap(template.format(place=place), columns, "  ", hang, break_long_words=False)
    lines.append("")
    if tier < max(TIERS):
        next_tier = labels[next_label].format(label=labels[f"tier_{tier + 1}"])
        lines += wrap(next_tier, columns, break_long_words=False)
    else:
        lines.append(texts.paragraph(labels["all_shown"].format(number=number), width=columns))
    return lines
