"""python -m labs hint [N]: the next hint for check N (or the first failing one), tier by tier."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labs.checking.checks import CHECKS
from labs.review.texts import message
from labs.term.i18n import _
from labs.term.layout import terminal_width

from . import learner_tree_root

CHECK_NUMBERS = [check.number for check in CHECKS]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the hint command."""
    parser = commands.add_parser(
        "hint",
        help=_("a hint for one check: the idea, then where, then what the code must do"),
        description=_(
            "Show the next hint for check N: tier 1 the idea, tier 2 where to look, "
            "tier 3 what the code must do (never the code itself). Each call shows the next "
            "tier; the lab remembers, per tree, how far you got. Every tier names the file:line "
            "of the check's TODO in your tree. Without N, the six checks run on the in-memory "
            "store first and the hint is for the first one that fails, as watch's h key gives."
        ),
    )
    parser.add_argument(
        "check",
        type=int,
        nargs="?",
        choices=CHECK_NUMBERS,
        help=_("the check's number (default: the first failing check)"),
    )
    parser.add_argument(
        "--tree",
        default="starter",
        help=_("starter, or the path of your copy of the starter tree (default: starter)"),
    )
    parser.add_argument(
        "--level",
        type=int,
        choices=[1, 2, 3],
        help=_("show this tier now instead of the next one"),
    )
    parser.set_defaults(func=run)


def first_failing(root: Path) -> tuple[int | None, int]:
    """Run the six checks: the first that fails, or None after saying why there is none.

    The second value is the exit code for None: 0 when all six pass, 1 when they could not run.
    """
    from labs.review.progress import error_lines, failing, fresh_report
    from labs.term.layout import terminal_width

    print(message("hint", "finding"), file=sys.stderr, flush=True)
    report = fresh_report(root)
    if report.error:
        width = terminal_width(sys.stdout)
        print("\n".join([*error_lines(report.error, "", width), message("hint", "fix_first")]))
        return None, 1
    left = failing(report)
    if not left:
        print(message("watch", "no_hint_needed"))
        return None, 0
    return left[0], 0


def run(args: argparse.Namespace) -> int:
    """Print the tier due for this tree; 1 when the checks cannot run, 2 without a tree."""
    from ..review.hints import hint_lines, tier_to_show
    from ..review.state import legacy_notice

    root = learner_tree_root(args.tree)
    if root is None:
        return 2
    notice = legacy_notice()
    if notice:
        print(notice, file=sys.stderr)
    number, code = (args.check, 0) if args.check is not None else first_failing(root)
    if number is None:
        return code
    titles = {check.number: _(check.title) for check in CHECKS}
    tier = tier_to_show(root, number, args.level)
    width = terminal_width(sys.stdout)
    print("\n".join(hint_lines(root, number, tier, titles[number], width=width)))
    return 0
