"""The drift guard: starter and solution differ only inside the marked regions.

Three promises keep the lab honest, and each broken one is reported with the
file and line to look at. The two kept here compare files:

1. Outside the regions the two trees are identical, file for file.
2. Every TODO(check N) region of the starter has its counterpart, the
   SOLUTION marker for the same check, at the same place in the solution,
   and the reverse.

The third (the starter fails exactly the checks its regions serve, the
solution passes all six) runs the checks: labs/grading/drift.py.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from .finding import tree_root
from .regions import RegionError, parse_regions, read_lines, source_files

EXPECTED_TAG = {"starter": "TODO", "solution": "SOLUTION"}


@dataclass(frozen=True)
class Drift:
    """One place where the trees disagree, and what is wrong there."""

    where: str  # "path:line", as a person would open it
    problem: str

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


def skeleton(name: str, relative: str, lines: list[str]) -> tuple[list[str], list[int]]:
    """A file's lines with region bodies removed and openers written tag-neutrally.

    Returns the lines and the 1-based line number each came from, so two
    skeletons compare equal exactly when the files agree outside the regions.
    """
    regions = parse_regions(f"{name}/{relative}", lines)
    inside = {line for r in regions for line in range(r.start + 1, r.end)}
    openers = {r.start: r for r in regions}
    kept, numbers = [], []
    for number, text in enumerate(lines, start=1):
        if number in inside:
            continue
        region = openers.get(number)
        kept.append(f"{region.indent}# region(check {region.check})" if region else text)
        numbers.append(number)
    return kept, numbers


def compare_file(relative: str, starter: Path, solution: Path) -> tuple[list[Drift], list[Drift]]:
    """The drift in one file present in both trees, and notes that are not drift."""
    a_lines, b_lines = read_lines(starter / relative), read_lines(solution / relative)
    if not relative.endswith(".py"):
        same = (starter / relative).read_bytes() == (solution / relative).read_bytes()
        return (
            []
            if same
            else [
                Drift(
                    f"solution/{relative}:1",
                    f"differs from starter/{relative}, and it has no marked regions",
                )
            ]
        ), []
    try:
        a, a_numbers = skeleton("starter", relative, a_lines)
        b, b_numbers = skeleton("solution", relative, b_lines)
    except RegionError as error:
        return [Drift(f"{error.path}:{error.line}", error.problem)], []
    drift = [
        *tag_problems("starter", relative, a_lines),
        *tag_problems("solution", relative, b_lines),
    ]
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        a_at = a_numbers[a0] if a0 < len(a_numbers) else len(a_lines) + 1
        b_at = b_numbers[b0] if b0 < len(b_numbers) else len(b_lines) + 1
        drift.append(
            Drift(
                f"solution/{relative}:{b_at}",
                describe(a[a0:a1], b[b0:b1], f"starter/{relative}:{a_at}"),
            )
        )
    return drift, instruction_notes(relative, starter, solution)


def describe(starter_only: list[str], solution_only: list[str], starter_at: str) -> str:
    """Say in words how two stretches of lines outside the regions differ."""

    def shown(lines: list[str]) -> str:
        text = repr(lines[0].strip()) if lines else "nothing"
        return text + (f" (+{len(lines) - 1} more lines)" if len(lines) > 1 else "")

    markers = [line.strip() for line in starter_only + solution_only if "# region(check" in line]
    if markers:
        return (
            f"the marked regions do not pair up with {starter_at} ({markers[0]} has no "
            "counterpart): every TODO(check N) needs the SOLUTION marker of check N "
            "at the same place"
        )
    return (
        f"differs from {starter_at} outside the marked regions: solution has "
        f"{shown(solution_only)}, starter has {shown(starter_only)}; make the same "
        "change in both trees, or move it inside a region"
    )


def tag_problems(name: str, relative: str, lines: list[str]) -> list[Drift]:
    """Regions opened with the other tree's tag (a SOLUTION marker left in the starter)."""
    return [
        Drift(
            f"{name}/{relative}:{r.start}",
            f"{name}/ opens regions with {EXPECTED_TAG[name]}(check N), not {r.tag}",
        )
        for r in parse_regions(f"{name}/{relative}", lines)
        if r.tag != EXPECTED_TAG[name]
    ]


def instruction_notes(relative: str, starter: Path, solution: Path) -> list[Drift]:
    """Paired regions whose one-line instructions are worded differently."""
    a = parse_regions(relative, read_lines(starter / relative))
    b = parse_regions(relative, read_lines(solution / relative))
    return [
        Drift(
            f"solution/{relative}:{theirs.start}",
            f"instruction differs from starter/{relative}:{mine.start}: "
            f"{mine.instruction!r} vs {theirs.instruction!r}",
        )
        for mine, theirs in zip(a, b, strict=False)
        if mine.check == theirs.check and mine.instruction != theirs.instruction
    ]


@dataclass
class DriftReport:
    """All drift between two trees; notes are worth a look but never fail the guard."""

    drift: list[Drift]
    notes: list[Drift]

    @property
    def ok(self) -> bool:
        """True when the trees agree everywhere outside the regions."""
        return not self.drift


def tree_drift(starter: Path | None = None, solution: Path | None = None) -> DriftReport:
    """Compare two trees file by file (caches and generated files ignored)."""
    a_root, b_root = starter or tree_root("starter"), solution or tree_root("solution")
    a_files, b_files = set(source_files(a_root)), set(source_files(b_root))
    report = DriftReport([], [])
    for relative in sorted(a_files - b_files):
        report.drift.append(Drift(f"starter/{relative}:1", "has no counterpart in solution/"))
    for relative in sorted(b_files - a_files):
        report.drift.append(Drift(f"solution/{relative}:1", "has no counterpart in starter/"))
    for relative in sorted(a_files & b_files):
        drift, notes = compare_file(relative, a_root, b_root)
        report.drift.extend(drift)
        report.notes.extend(notes)
    return report
