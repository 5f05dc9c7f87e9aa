"""The marked regions of a tree: where a learner edits, and which check each serves.

The markers are the one source of truth for "which check does this code
serve": the starter opens a region with `# TODO(check N): instruction`, the
solution with the same marker tagged `SOLUTION` instead of `TODO`, and both
close it with `# END(check N)` at the same indentation. The diff, the drift guard, the
grading tests and the hints all read the trees through this module.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .finding import REPO_ROOT

OPENER = re.compile(
    r"^(?P<indent>[ \t]*)#\s*(?P<tag>TODO|SOLUTION)\(check (?P<check>\d+)\):?\s*"
    r"(?P<instruction>.*?)\s*$"
)
CLOSER = re.compile(r"^(?P<indent>[ \t]*)#\s*END\(check (?P<check>\d+)\)\s*$")

# Caches and generated files are never part of a tree's source.
IGNORED_DIRS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
IGNORED_SUFFIXES = (".pyc", ".pyo", ".egg-info")


class RegionError(Exception):
    """A marker without its partner, or markers that do not nest as regions."""

    def __init__(self, path: str, line: int, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(f"{path}:{line}: {problem}")


@dataclass(frozen=True)
class Region:
    """One marked region: its file, the check it serves, its marker lines and body.

    start and end are the 1-based lines of the opener and the closer; the
    body is the lines strictly between them.
    """

    path: str  # relative to the tree root, with forward slashes
    check: int
    tag: str  # "TODO" in the starter, "SOLUTION" in the solution
    start: int
    end: int
    instruction: str
    body_lines: tuple[str, ...]
    indent: str


def source_files(tree_root: Path) -> list[str]:
    """Every file of a tree, relative and sorted, leaving out caches and generated files."""
    found = []
    for path in tree_root.rglob("*"):
        relative = path.relative_to(tree_root)
        if any(part in IGNORED_DIRS or part.endswith(IGNORED_SUFFIXES) for part in relative.parts):
            continue
        if path.is_file():
            found.append(relative.as_posix())
    return sorted(found)


def parse_regions(path: str, lines: list[str]) -> list[Region]:
    """The regions of one file's lines, in order, or RegionError naming the bad marker."""
    regions: list[Region] = []
    opened: tuple[int, re.Match[str]] | None = None
    for number, line in enumerate(lines, start=1):
        opener, closer = OPENER.match(line), CLOSER.match(line)
        if opener:
            if opened is not None:
                raise RegionError(
                    path,
                    number,
                    f"a new region opens before the region at line "
                    f"{opened[0]} is closed with # END(check {opened[1]['check']})",
                )
            opened = (number, opener)
        elif closer:
            if opened is None:
                raise RegionError(path, number, "# END without a TODO/SOLUTION opener above it")
            start, match = opened
            if closer["check"] != match["check"] or closer["indent"] != match["indent"]:
                raise RegionError(
                    path,
                    number,
                    f"this END does not match the "
                    f"{match['tag']}(check {match['check']}) at line {start} "
                    "(same check number and indentation needed)",
                )
            regions.append(
                Region(
                    path,
                    int(match["check"]),
                    match["tag"],
                    start,
                    number,
                    match["instruction"],
                    tuple(lines[start : number - 1]),
                    match["indent"],
                )
            )
            opened = None
    if opened is not None:
        raise RegionError(
            path,
            opened[0],
            f"{opened[1]['tag']}(check {opened[1]['check']}) is never closed with # END",
        )
    return regions


def read_lines(path: Path) -> list[str]:
    """A text file's lines without their line endings; undecodable files read as empty."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        return []


def regions_in(tree_root: Path) -> list[Region]:
    """Every marked region of a tree, file by file in path order."""
    found: list[Region] = []
    for relative in source_files(tree_root):
        if relative.endswith(".py"):
            found.extend(parse_regions(relative, read_lines(tree_root / relative)))
    return found


def regions_by_file(tree_root: Path) -> dict[str, list[Region]]:
    """The regions of a tree grouped by file."""
    grouped: dict[str, list[Region]] = {}
    for region in regions_in(tree_root):
        grouped.setdefault(region.path, []).append(region)
    return grouped


def checks_served(tree_root: Path) -> set[int]:
    """The check numbers that have at least one region in the tree."""
    return {region.check for region in regions_in(tree_root)}


def paired(starter: list[Region], solution: list[Region]) -> Iterator[tuple[Region, Region]]:
    """Pair a file's starter and solution regions in order; they must serve the same checks."""
    for mine, theirs in zip(starter, solution, strict=False):
        if mine.check == theirs.check:
            yield mine, theirs


def copy_tree(source: Path, destination: Path) -> Path:
    """Copy a tree without its caches, so a copy never reuses stale bytecode."""
    shutil.copytree(
        source, destination, ignore=shutil.ignore_patterns(*IGNORED_DIRS, "*.pyc", "*.egg-info")
    )
    return destination


def project_files(root: Path = REPO_ROOT) -> list[str]:
    """The project's own files, relative: what git tracks or would track, else a walk."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=root,
            capture_output=True,
            check=True,
            timeout=30,
        ).stdout.decode()
        names = [name for name in listed.split("\0") if name and (root / name).is_file()]
    except (OSError, subprocess.SubprocessError):
        names = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
        names = [n for n in names if not n.startswith((".git/", ".env"))]
    return sorted(
        name
        for name in names
        if not IGNORED_DIRS.intersection(Path(name).parts)
        and not name.endswith(IGNORED_SUFFIXES)
        and ".egg-info/" not in name
    )
