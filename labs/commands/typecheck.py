"""python -m labs typecheck: mypy --strict over both trees, explicit Any disallowed."""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.typechecking import mypy_command

from ..review.texts import message

PROGRESS_EVERY = 10.0  # seconds between "still type-checking" lines on a slow (cold) run


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the typecheck command."""
    parser = commands.add_parser(
        "typecheck",
        help=_("mypy --strict on the trees"),
        description=_(
            "Type-check trees with mypy --strict and --disallow-any-explicit, "
            "using the settings in pyproject.toml."
        ),
    )
    parser.add_argument(
        "trees",
        nargs="*",
        # The learners' release has no solution/: check the trees that are there.
        default=[name for name in ("starter", "solution") if (REPO_ROOT / name).is_dir()],
        help=_("trees to check (default: starter solution, those present)"),
    )
    parser.set_defaults(func=run)


def named_together(names: list[str]) -> str:
    """Names as a reader lists them: "starter", "starter and solution", "a, b and c"."""
    if len(names) < 2:
        return "".join(names)
    return _("{names} and {last}").format(names=", ".join(names[:-1]), last=names[-1])


@contextlib.contextmanager
def checkout_layout() -> Iterator[Path]:
    """Where mypy runs: the checkout, or for an installed kit a folder laid out like one.

    mypy takes the folder above a tree's package as a source root. Installed,
    that is site-packages, and every library there would be read as the
    learner's code; links to labs/ and the trees in a folder of their own keep
    the checkout's layout instead.
    """
    if (REPO_ROOT / "pyproject.toml").is_file():
        yield REPO_ROOT
        return
    with tempfile.TemporaryDirectory(prefix="lab-typecheck-") as folder:
        for name in ("labs", "starter", "solution"):
            if (REPO_ROOT / name).is_dir():
                (Path(folder) / name).symlink_to(REPO_ROOT / name, target_is_directory=True)
        yield Path(folder)


def run(args: argparse.Namespace) -> int:
    """Run mypy and pass its exit code on, saying on stderr that it works while it does."""
    cold = not (REPO_ROOT / ".mypy_cache").is_dir()
    key = "working_cold" if cold else "working"
    print(message("typecheck", key, trees=named_together(args.trees)), file=sys.stderr, flush=True)
    with checkout_layout() as folder:
        roots = [tree_root(spec) for spec in args.trees]
        paths = [
            str(folder / root.relative_to(REPO_ROOT) if root.is_relative_to(REPO_ROOT) else root)
            for root in roots
        ]
        return wait_for(subprocess.Popen(mypy_command(paths), cwd=folder))


def wait_for(mypy: subprocess.Popen[bytes]) -> int:
    """mypy's exit code, with a line on stderr every PROGRESS_EVERY seconds while it works."""
    started = time.monotonic()
    try:
        while True:
            try:
                return mypy.wait(timeout=PROGRESS_EVERY)
            except subprocess.TimeoutExpired:
                waited = time.monotonic() - started
                print(message("typecheck", "still", seconds=waited), file=sys.stderr, flush=True)
    finally:
        if mypy.poll() is None:  # interrupted: do not leave mypy running behind
            mypy.kill()
            mypy.wait()
