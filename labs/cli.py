"""python -m labs <command>: the lab kit's commands, one module each."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys

from . import i18n
from .i18n import _

# Each module here defines register(subparsers), adding one command.
COMMAND_MODULES = [
    "labs.commands.check",
    "labs.commands.typecheck",
    "labs.commands.diff",
    "labs.commands.drift",
    "labs.commands.grade",
    "labs.commands.release",
    "labs.commands.watch",
    "labs.commands.race",
    "labs.commands.bench",
    "labs.commands.constraints",
    "labs.commands.hint",
    "labs.commands.reset",
    "labs.commands.review",
    "labs.commands.checklist",
]


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every command registered."""
    parser = argparse.ArgumentParser(
        prog="python -m labs",
        description=_("mini-koda day 8 lab kit: self-checks, instructor and grading tools"),
    )
    parser.add_argument(
        "--lang",
        metavar="LANG",
        help=_("en or zh_CN (default: from LAB_LANG, LANGUAGE, LC_ALL or LANG)"),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        # The learners' release leaves out the instructors' commands (diff, drift).
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name).register(commands)
    return parser


def _language_flag(argv: list[str]) -> str | None:
    """The value of --lang LANG or --lang=LANG among the arguments, if any."""
    for position, argument in enumerate(argv):
        if argument == "--lang" and position + 1 < len(argv):
            return argv[position + 1]
        if argument.startswith("--lang="):
            return argument.partition("=")[2]
    return None


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run the chosen command; return its exit code."""
    # The language is set before the parser is built, so --help speaks it too.
    wanted = _language_flag(sys.argv[1:] if argv is None else argv)
    if wanted:
        try:
            i18n.use(i18n.choose(wanted))
        except ValueError as error:
            print(f"error: --lang: {error}", file=sys.stderr)
            return 2
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # piped into `head`: stop printing quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code
