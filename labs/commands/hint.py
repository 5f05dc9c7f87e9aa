"""python -m labs hint N: the next hint for check N, one tier at a time."""

from __future__ import annotations

import argparse
import sys

from labs.checking.checks import CHECKS
from labs.term.i18n import _

from . import learner_tree

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
            "of the check's TODO in your tree."
        ),
    )
    parser.add_argument("check", type=int, choices=CHECK_NUMBERS, help=_("the check's number"))
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


def run(args: argparse.Namespace) -> int:
    """Print the tier due for this tree; exit 2 when the tree is not there."""
    from ..review.hints import hint_lines, tier_to_show
    from ..review.state import legacy_notice

    root = learner_tree(args.tree)
    if root is None:
        return 2
    notice = legacy_notice()
    if notice:
        print(notice, file=sys.stderr)
    titles = {check.number: _(check.title) for check in CHECKS}
    tier = tier_to_show(root, args.check, args.level)
    print("\n".join(hint_lines(root, args.check, tier, titles[args.check])))
    return 0
