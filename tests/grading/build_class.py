"""A mixed class of hand-ins to time `python -m labs grade` on (see main() for the command).

Thirty by default, in the proportions a real class hands in: mostly partial
or full solutions, a few zips, one edited outside its regions, and a few
broken ones (a syntax error, a deleted file, an endless loop, an upload cut
short). Then, for example:

    python -m tests.grading.build_class /tmp/class30
    time python -m labs grade /tmp/class30/* --out /tmp/class30-grades
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.grading import submissions as make


def solved(*checks: int) -> Callable[[Path], Path]:
    """A hand-in with the solution's regions for these checks (all when none given)."""
    return lambda folder: make.fixed(folder, set(checks) or None)


def zipped_solution(folder: Path) -> Path:
    """A fully solved hand-in with its migration, zipped."""
    build = folder.parent / ".build" / folder.name
    make.with_migration(make.fixed(build) / "starter")
    return make.zipped(build, folder.with_suffix(".zip"))


def edited_outside(folder: Path) -> Path:
    """A solved hand-in with a comment added outside its regions."""
    make.fixed(folder)
    routes = folder / "starter" / "gateway" / "routes.py"
    routes.write_text(routes.read_text(encoding="utf-8") + "# done\n", encoding="utf-8")
    return folder


# One round of ten; a class of thirty is three rounds (the broken ones once each).
HONEST: list[Callable[[Path], Path]] = [
    solved(),
    solved(3),
    solved(4),
    solved(3, 4),
    solved(3, 5),
    solved(4, 5),
    make.starter_copy,
    zipped_solution,
]
BROKEN: list[Callable[[Path], Path]] = [
    make.with_syntax_error,
    make.with_deleted_file,
    make.with_endless_transition,
    edited_outside,
    lambda folder: make.not_a_zip(folder.with_suffix(".zip")),
]


def build_class(out: Path, size: int = 30) -> list[Path]:
    """Write `size` hand-ins into out (emptied first); return their paths."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    kinds = [*BROKEN, *(HONEST * size)][:size]
    made = [kind(out / f"learner{number:02d}") for number, kind in enumerate(kinds, start=1)]
    shutil.rmtree(out / ".build", ignore_errors=True)
    return made


def main() -> None:
    """Build the class named on the command line."""
    parser = argparse.ArgumentParser(prog="python -m tests.grading.build_class")
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=30)
    args = parser.parse_args()
    made = build_class(args.out, args.size)
    print(f"{len(made)} hand-ins in {args.out}")


if __name__ == "__main__":
    main()
