"""python -m labs diff: what learners are asked to write, hunk by hunk, under each check."""

from __future__ import annotations

import argparse
import sys
from typing import Literal, TextIO, get_args

from labs.checking.checks import CHECKS
from labs.term.i18n import _
from labs.trees.diff import Hunk, tree_diff
from labs.trees.finding import tree_root

COLOURS = {"-": "\033[31m", "+": "\033[32m", "heading": "\033[1m", "where": "\033[36m"}
RESET = "\033[0m"
When = Literal["auto", "always", "never"]  # --color: auto colours on a terminal only


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the diff command."""
    parser = commands.add_parser(
        "diff",
        help=_("starter against solution, under the check each change serves"),
        description=_(
            "Show what a learner writes: each marked region of the starter against "
            "its solution, grouped by the check it serves. Coloured on a terminal, plain when "
            "piped."
        ),
    )
    parser.add_argument(
        "--stat", action="store_true", help=_("only the files and changed lines per check")
    )
    parser.add_argument("--starter", default="starter", help=_("starter tree (name or path)"))
    parser.add_argument("--solution", default="solution", help=_("solution tree (name or path)"))
    parser.add_argument(
        "--color",
        choices=get_args(When),
        default="auto",
        help=_("colour the output (default: only on a terminal)"),
    )
    parser.set_defaults(func=run)


def check_titles() -> dict[int, str]:
    """The title of each of the six checks, by number, in the language in use."""
    return {check.number: _(check.title) for check in CHECKS}


def check_heading(number: int, title: str) -> str:
    """ "check 3: idempotency: ...", or "check 3" for a check without a title."""
    if not title:
        return _("check {number}").format(number=number)
    return _("check {number}: {title}").format(number=number, title=title)


def paint(text: str, colour: str, on: bool) -> str:
    """Wrap text in an ANSI colour when colouring is on."""
    return f"{COLOURS[colour]}{text}{RESET}" if on else text


def render_hunks(diff: dict[int, list[Hunk]], colour: bool) -> list[str]:
    """The full diff as lines: a heading per check, then each hunk's lines."""
    titles = check_titles()
    out: list[str] = []
    for check, hunks in diff.items():
        out.append(paint(check_heading(check, titles.get(check, "")), "heading", colour))
        for hunk in hunks:
            where = f"  {hunk.path}  starter:{hunk.starter_line}  solution:{hunk.solution_line}"
            out.append(paint(where, "where", colour))
            out.append(f"  # {hunk.instruction}")
            for op, text in hunk.lines:
                line = f"  {op} {text}".rstrip()
                out.append(paint(line, op, colour) if op in "+-" else line)
        out.append("")
    return out


def render_stat(diff: dict[int, list[Hunk]]) -> list[str]:
    """Files and changed lines per check, then a total."""
    out: list[str] = []
    added = removed = 0
    for check, hunks in diff.items():
        files: dict[str, list[int]] = {}
        for hunk in hunks:
            counts = files.setdefault(hunk.path, [0, 0])
            counts[0] += hunk.added
            counts[1] += hunk.removed
        # One sentence for one file, another for more (Chinese says both the same way).
        if len(files) == 1:
            out.append(_("check {number}: 1 file").format(number=check))
        else:
            out.append(_("check {number}: {count} files").format(number=check, count=len(files)))
        for path, (plus, minus) in files.items():
            out.append(f"  {path:<28} +{plus} -{minus}")
            added, removed = added + plus, removed + minus
    regions = sum(len(hunks) for hunks in diff.values())
    out.append(
        _("{regions} regions, {checks} checks: +{added} -{removed} lines").format(
            regions=regions, checks=len(diff), added=added, removed=removed
        )
    )
    return out


def use_colour(choice: When, stream: TextIO) -> bool:
    """Colour on a terminal (or when asked), never into a pipe or file by default."""
    if choice == "auto":
        return stream.isatty()
    return choice == "always"


def run(args: argparse.Namespace) -> int:
    """Print the diff (or its --stat); exit 0."""
    diff = tree_diff(tree_root(args.starter), tree_root(args.solution))
    lines = (
        render_stat(diff) if args.stat else render_hunks(diff, use_colour(args.color, sys.stdout))
    )
    print("\n".join(lines))
    return 0
