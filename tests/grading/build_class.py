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

from labs.trees.finding import tree_root
from labs.trees.regions import copy_tree
from tests.grading import submissions as make


def solved(*checks: int) -> Callable[[Path], Path]:
    """A hand-in with the solution's regions for these checks (all when none given), and
    the migration a learner generates once the schema is done."""

    def hand_in(folder: Path) -> Path:
        make.with_full_migration(make.fixed(folder, set(checks) or None) / "starter")
        return folder

    return hand_in


def zipped_solution(folder: Path) -> Path:
    """A fully solved hand-in with its migration, zipped."""
    build = folder.parent / ".build" / folder.name
    make.with_full_migration(make.fixed(build) / "starter")
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


def with_backup_tree(folder: Path) -> Path:
    """A solved starter/ beside an untouched backup, old_starter/, at the same depth."""
    solved()(folder)
    copy_tree(tree_root("starter"), folder / "old_starter")
    return folder


def with_the_solution_beside(folder: Path) -> Path:
    """A half-solved starter/ beside a copy of the solution/ tree (it must not be graded)."""
    solved(3)(folder)
    copy_tree(tree_root("solution"), folder / "solution")
    return folder


def with_a_large_log(folder: Path) -> Path:
    """A solved hand-in with a 100 MB log (sparse: it takes no room on disk)."""
    solved()(folder)
    with (folder / "server.log").open("wb") as log:
        log.truncate(100 * 1024 * 1024)
    return folder


def with_a_venv(folder: Path) -> Path:
    """A hand-in solved for checks 3 and 4, with its virtualenv handed in too."""
    solved(3, 4)(folder)
    venv = folder / "venv"
    (venv / "lib" / "python3.11" / "site-packages" / "flask").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (venv / "lib" / "python3.11" / "site-packages" / "flask" / "app.py").write_text("x = 1\n")
    return folder


def zipped_with_junk(folder: Path) -> Path:
    """A solved hand-in zipped with its .venv/ and node_modules/."""
    build = folder.parent / ".build" / folder.name
    solved()(build)
    (build / ".venv" / "bin").mkdir(parents=True)
    (build / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (build / ".venv" / "bin" / "python").write_bytes(b"\x7fELF" + bytes(4096))
    (build / "node_modules" / "htmx.org").mkdir(parents=True)
    (build / "node_modules" / "htmx.org" / "htmx.min.js").write_text("/* htmx */\n")
    return make.zipped(build, folder.with_suffix(".zip"))


# The walk-through of issue 21: fifteen learners, named as written (Chinese names, one
# with Markdown in it), with each of the hand-ins an intake must grade as it deserves.
WALKTHROUGH: list[tuple[str, Callable[[Path], Path]]] = [
    ("张伟", solved()),
    ("李娜", zipped_solution),
    ("王芳", with_backup_tree),
    ("刘洋", with_the_solution_beside),
    ("陈静", with_a_large_log),
    ("杨磊", with_a_venv),
    ("赵敏", zipped_with_junk),
    ("Zoë O'Brien", make.starter_copy),
    ("*Ana* <img src=x> Lima", solved(4, 5)),
    ("黄晓明", make.with_syntax_error),
    ("周杰", make.with_endless_transition),
    ("吴昊", edited_outside),
    ("徐丽", solved(3)),
    ("孙悦", make.with_deleted_file),
    ("马超", solved(3, 5)),
]


def build_walkthrough(out: Path) -> list[Path]:
    """Write the fifteen hand-ins of the walk-through into out (emptied first)."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    made = [kind(out / name) for name, kind in WALKTHROUGH]
    shutil.rmtree(out / ".build", ignore_errors=True)
    return made


def main() -> None:
    """Build the class named on the command line."""
    parser = argparse.ArgumentParser(prog="python -m tests.grading.build_class")
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=int, default=30)
    parser.add_argument(
        "--walkthrough", action="store_true", help="the fifteen hand-ins of the intake walk-through"
    )
    args = parser.parse_args()
    made = build_walkthrough(args.out) if args.walkthrough else build_class(args.out, args.size)
    print(f"{len(made)} hand-ins in {args.out}")


if __name__ == "__main__":
    main()
