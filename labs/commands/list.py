"""python -m labs list: each check as pass or fail, and the next TODO to edit."""

from __future__ import annotations

import argparse
import sys

import wcwidth

from labs.checking.checks import CHECKS
from labs.checking.report import Report
from labs.review.progress import error_lines, failing, fresh_report, next_todo, score
from labs.term.i18n import _
from labs.term.layout import marks, terminal_width, wrapped

from . import add_timeout_option, add_tree_option, learner_tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the list command."""
    parser = commands.add_parser(
        "list",
        help=_("each check as pass or fail, and the next TODO to edit"),
        description=_(
            "Run the six self-checks on the in-memory store, then list each one as "
            "pass or fail and name the next place to edit: the TODO that the first failing "
            "check's failure points at, with its file:line and instruction."
        ),
    )
    add_tree_option(parser)
    add_timeout_option(parser)
    parser.set_defaults(func=run)


def progress_lines(tree: str, report: Report, place: str | None, width: int | None) -> list[str]:
    """The score, a row per check, then what to do next."""
    ok, bad = marks(sys.stdout)  # of one width: the titles form one column
    left = failing(report)
    lines = [score(tree, report)]
    for check in CHECKS:
        row = f"{check.number} {bad if check.number in left else ok}  "
        hang = " " * (2 + wcwidth.width(row))  # a long title goes on under itself
        lines += wrapped(row + _(check.title), "  ", width, hang)
    if report.error:
        return lines + error_lines(report.error, "  ", width)
    if not left:
        done = _("all six pass: done. Next, the same checks on Postgres (see the README).")
        return lines + wrapped(done, "", width, "  ")
    if place is None:
        return [*lines, _("next: check {number}").format(number=left[0])]
    said = _("next: edit {place}")
    hang = " " * wcwidth.width(said.partition("{place}")[0])
    return lines + wrapped(said.format(place=place), "", width, hang)


def run(args: argparse.Namespace) -> int:
    """Print where the tree stands; 2 when the tree is not there."""
    root = learner_tree_root(args.tree)
    if root is None:
        return 2
    report = fresh_report(root, timeout=args.timeout)
    place = next_todo(root, report)
    shown = progress_lines(
        args.tree, report, str(place) if place else None, terminal_width(sys.stdout)
    )
    print("\n".join(shown))
    return 0
