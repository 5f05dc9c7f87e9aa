"""A starter copy solved: the solution's region bodies put in its TODO regions.

What the tests build solved and half-solved trees with, reading the regions
as the kit does (labs.trees.regions).
"""

from __future__ import annotations

from pathlib import Path

from labs.trees.regions import Region, paired, read_lines, regions_by_file


def apply_solution(
    starter_copy_root: Path, solution_root: Path, checks: set[int] | None = None
) -> list[Region]:
    """Replace the body of each TODO region in a starter copy by the solution's body.

    Only the regions serving `checks` are replaced when it is given. The TODO
    marker lines stay, so hints still point at them. Returns the replaced
    regions of the starter copy.
    """
    solution_regions = regions_by_file(solution_root)
    replaced: list[Region] = []
    for relative, regions in regions_by_file(starter_copy_root).items():
        lines = read_lines(starter_copy_root / relative)
        # Work bottom-up so earlier line numbers stay valid while splicing.
        counterparts = solution_regions.get(relative, [])
        pairs = [
            (mine, theirs)
            for mine, theirs in paired(regions, counterparts)
            if checks is None or mine.check in checks
        ]
        for mine, theirs in reversed(pairs):
            lines[mine.start : mine.end - 1] = list(theirs.body_lines)
            replaced.append(mine)
        if pairs:
            (starter_copy_root / relative).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sorted(replaced, key=lambda r: (r.path, r.start))
