"""Edits a submission made outside its TODO regions: worth a look, never a score.

A learner is asked to write code inside the marked regions only. Grading
runs the learner's code, so a submission that changes the rest of the tree
could also change how it is graded; listing every edit outside the regions
(as file:line) lets an instructor look at exactly those places. The list is
a note on the grade, not a penalty: a stray blank line is an edit too.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from labs.trees.drift import skeleton
from labs.trees.finding import tree_root
from labs.trees.regions import RegionError, read_lines, source_files

SHOWN = 8  # locations listed in a note before "and N more"


def edits_outside_regions(submission: Path, shipped: Path | None = None) -> list[str]:
    """Every place the submission differs from the shipped starter outside the regions."""
    original = shipped or tree_root("starter")
    theirs, ours = set(source_files(submission)), set(source_files(original))
    found = [f"{relative}: deleted" for relative in sorted(ours - theirs)]
    # A new file anywhere is an edit (a keys.pyi steers the typecheck as surely as code
    # steers the checks), a migrations/ folder inside the tree included: Alembic reads the
    # one beside the tree, and the graded copy (splice.py) holds none of these files.
    found += [f"{relative}:1: a new file" for relative in sorted(theirs - ours)]
    for relative in sorted(ours & theirs):
        found += file_edits(relative, original, submission)
    return found


def file_edits(relative: str, original: Path, submission: Path) -> list[str]:
    """The submission's lines (file:line) that differ from the shipped file outside regions."""
    if not relative.endswith(".py"):
        same = (original / relative).read_bytes() == (submission / relative).read_bytes()
        return [] if same else [f"{relative}:1: changed"]
    lines = read_lines(submission / relative)
    try:
        shipped, _ = skeleton("starter", relative, read_lines(original / relative))
        edited, numbers = skeleton("submission", relative, lines)
    except RegionError as error:
        return [f"{relative}:{error.line}: {error.problem}"]
    matcher = difflib.SequenceMatcher(a=shipped, b=edited, autojunk=False)
    found = []
    for tag, _a0, _a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        first = numbers[b0] if b0 < len(numbers) else len(lines) + 1
        last = numbers[b1 - 1] if b1 - 1 > b0 else first  # a deletion has no lines of its own
        found.append(f"{relative}:{first}" + (f"-{last}" if last > first else ""))
    return found


def edits_note(edits: list[str]) -> str:
    """One line for the note column: where the tree was edited outside its regions."""
    if not edits:
        return ""
    shown = ", ".join(edits[:SHOWN]) + (
        f" and {len(edits) - SHOWN} more" if len(edits) > SHOWN else ""
    )
    return f"edited outside the TODO regions (not scored; look there): {shown}"
