"""`python -P -m labs.grading.pytest_main --lab-tree PATH`: pytest grading the tree cannot steer.

pytest reads its settings before any plugin runs: the ini file it finds
from the arguments and the current folder (`pytest.ini`, `tox.ini`,
`setup.cfg`, `pyproject.toml`), that file's `addopts` (where
`-p no:lab_grading` would switch the grader off), `PYTEST_ADDOPTS`, and every
`conftest.py` between the root folder and the arguments. A positional
argument counts: `pytest --lab-tree starter` makes `starter` part of that
search. So this entry builds the whole command line itself:

- `-c` names an ini file written here, in a fresh folder, which is also the
  `--rootdir`: no file of the learner's is read as configuration;
- `--noconftest`: no `conftest.py` is imported;
- plugins are not autoloaded (`PYTEST_DISABLE_PLUGIN_AUTOLOAD`); the grading
  plugin is loaded by its module name, and `PYTEST_ADDOPTS` and
  `PYTEST_PLUGINS` are dropped;
- the tree is passed as `--lab-tree=/absolute/path`, never as a positional
  argument, and nothing else positional is accepted.

The plugin refuses to grade under any other configuration (see
`pinned_config_problem`). Run it with `python -P` (or from a folder holding
no `labs/`) so that the lab kit imported is the installed one, not a copy in
the current folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from labs.sandbox.errors import NoIsolationError
from labs.sandbox.modes import BWRAP_FLAG, BWRAP_HELP
from labs.term.i18n import _
from labs.version import version_text

from .session import begin_grading

if TYPE_CHECKING:
    import pytest

# The whole pytest configuration of a grading run. The plugin compares the
# ini file pytest actually read with this text, byte for byte.
INI_NAME = "lab-grading.ini"
KIT_INI = (
    "[pytest]\n# Written by labs.grading.pytest_main: the only settings a grading run reads.\n"
)
DROPPED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")


def build_parser() -> argparse.ArgumentParser:
    """The options a grading run accepts; anything else is refused."""
    parser = argparse.ArgumentParser(
        prog="python -P -m labs.grading.pytest_main",
        description="Grade one copy of the lab tree with pytest, one test per criterion.",
    )
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument("--lab-tree", required=True, metavar="PATH", help="the tree to grade")
    parser.add_argument("--lab-results", metavar="FILE", help="where to write results.json")
    parser.add_argument("--junit", metavar="FILE", help="also write the grade as JUnit XML")
    parser.add_argument("--lab-timeout", metavar="SECONDS", help="time limit per check process")
    parser.add_argument("--lab-migrations", metavar="DIR", help="the tree's Alembic scripts")
    parser.add_argument(
        "--lab-only", metavar="KEYS", action="append", help="grade only these criteria"
    )
    parser.add_argument(
        "--lab-fail-under", metavar="N[%]", help="exit 1 when the score is under N points or N%%"
    )
    parser.add_argument(
        "--lab-strict",
        action="store_true",
        help="score 0 the criteria whose region code reaches outside the lesson",
    )
    parser.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade even where no sandbox can be had: the learner's code runs as you",
    )
    parser.add_argument(BWRAP_FLAG, action="store_true", help=_(BWRAP_HELP))
    parser.add_argument("-q", "--quiet", action="count", default=0, help="less output")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more output")
    return parser


def pytest_arguments(options: argparse.Namespace, ini: Path) -> list[str]:
    """The full pytest command line: pinned configuration first, then the grading options."""
    arguments = [
        "-c",
        str(ini),
        f"--rootdir={ini.parent}",
        "--noconftest",
        "-ra",
        "-p",
        "no:cacheprovider",
        "-p",
        "labs.grading.plugin",
        f"--lab-tree={Path(options.lab_tree).absolute()}",
    ]
    for name in ("lab_results", "lab_timeout", "lab_migrations", "lab_fail_under"):
        value = getattr(options, name)
        if value is not None:
            value = (
                str(Path(value).absolute()) if name in ("lab_results", "lab_migrations") else value
            )
            arguments.append(f"--{name.replace('_', '-')}={value}")
    if options.junit is not None:
        arguments.append(f"--lab-junit={Path(options.junit).absolute()}")
    arguments += [f"--lab-only={keys}" for keys in options.lab_only or []]
    arguments += ["--lab-strict"] * options.lab_strict
    arguments += ["--unsafe-no-sandbox"] * options.unsafe_no_sandbox
    arguments += [BWRAP_FLAG] * options.require_bwrap
    arguments += ["-q"] * options.quiet + ["-v"] * options.verbose
    return arguments


def pinned_config_problem(config: pytest.Config, tree: Path) -> str | None:
    """Why this run's configuration is not the one pytest_main pins, or None when it is."""
    ini = config.inipath
    if ini is None or ini.name != INI_NAME:
        return f"pytest read its settings from {ini or 'no ini file'}, which the tree could write"
    try:
        pinned = ini.read_text(encoding="utf-8") == KIT_INI
    except OSError:
        pinned = False
    if not pinned or ini.resolve().is_relative_to(tree):
        return f"pytest read its settings from {ini}, not from the lab kit's own"
    if config.rootpath != ini.parent:
        return f"the root folder is {config.rootpath}, not the one the lab kit made"
    if not config.getoption("noconftest"):
        return "conftest.py files were allowed to load"
    if config.getoption("file_or_dir"):
        return "positional arguments were given: " + " ".join(config.getoption("file_or_dir"))
    set_env = [name for name in DROPPED_ENV if os.environ.get(name)]
    if set_env:
        return f"{', '.join(set_env)} is set"
    return None


def main(argv: list[str] | None = None) -> int:
    """Grade with a pinned configuration; return pytest's exit code."""
    options = build_parser().parse_args(argv)
    try:
        import pytest
    except ImportError:
        print(
            "error: grading needs pytest, which the grading install carries: "
            "python -m pip install -c labs/grading/constraints.txt -e '.[grading]' "
            "(see labs/INSTRUCTORS.md)",
            file=sys.stderr,
        )
        return 2

    try:  # the first line names the sandbox's mode, or says why grading will not start
        isolation = begin_grading(unsafe=options.unsafe_no_sandbox, bwrap=options.require_bwrap)
    except NoIsolationError as error:
        print(f"error: {error}", file=sys.stderr)
        return int(pytest.ExitCode.USAGE_ERROR)
    print(isolation.describe(), file=sys.stderr, flush=True)
    for name in DROPPED_ENV:
        os.environ.pop(name, None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory(prefix="lab-grading-") as folder:
        ini = Path(folder) / INI_NAME
        ini.write_text(KIT_INI, encoding="utf-8")
        return int(pytest.main(pytest_arguments(options, ini)))


if __name__ == "__main__":
    sys.exit(main())
