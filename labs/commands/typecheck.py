"""python -m labs typecheck: mypy --strict over both trees, explicit Any disallowed."""

from __future__ import annotations

import argparse
import subprocess
import sys

from ..trees import REPO_ROOT, tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the typecheck command."""
    parser = commands.add_parser(
        "typecheck",
        help="mypy --strict on the trees",
        description="Type-check trees with mypy --strict and --disallow-any-explicit, "
        "using the settings in pyproject.toml.",
    )
    parser.add_argument(
        "trees",
        nargs="*",
        # The learners' release has no solution/: check the trees that are there.
        default=[name for name in ("starter", "solution") if (REPO_ROOT / name).is_dir()],
        help="trees to check (default: starter solution, those present)",
    )
    parser.set_defaults(func=run)


def typecheck_command(paths: list[str]) -> list[str]:
    """The mypy command line for these tree directories."""
    config = REPO_ROOT / "pyproject.toml"
    return [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(config),
        "--strict",
        "--disallow-any-explicit",
        *paths,
    ]


def run(args: argparse.Namespace) -> int:
    """Run mypy and pass its exit code on."""
    paths = [str(tree_root(spec)) for spec in args.trees]
    return subprocess.call(typecheck_command(paths), cwd=REPO_ROOT)
