"""python -m labs reset N: put check N's TODO regions back as shipped; --undo puts yours back."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labs.checking.checks import CHECKS
from labs.term.i18n import _

from . import learner_tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the reset command."""
    parser = commands.add_parser(
        "reset",
        help=_("put one check's TODO regions back to the starter's text, keeping a backup"),
        description=_(
            "Put the code between TODO(check N) and END(check N) back to the text the "
            "starter shipped with, in every file of your tree. What was there is copied first "
            "into a timestamped backup folder (printed). Only the regions change; the rest of "
            "each file stays as you left it. With --undo, the files the last reset of check N "
            "changed get back what it replaced, as long as you have not edited them since."
        ),
    )
    parser.add_argument(
        "check", type=int, choices=[c.number for c in CHECKS], help=_("the check's number")
    )
    parser.add_argument(
        "--tree",
        default="starter",
        help=_("starter, or the path of your copy of the starter tree (default: starter)"),
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument(
        "--undo",
        action="store_true",
        help=_("put back what the last reset of check N replaced, from its backup"),
    )
    how.add_argument(
        "--from",
        dest="revision",
        metavar="REV",
        help=_(
            "read the shipped starter from this git revision (default: the lab kit's own "
            "starter, or git HEAD when the tree being reset is the kit's own)"
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Reset the regions and say what changed and where the backup is; 2 when it cannot."""
    from ..review.hints import shown
    from ..review.reset import ResetError, reset_check
    from ..review.texts import message

    root = learner_tree_root(args.tree)
    if root is None:
        return 2
    if args.undo:
        return undo(root, args.check)
    try:
        outcome = reset_check(root, args.check, args.revision)
    except ResetError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    if not outcome.restored:
        print(message("reset", "nothing", number=args.check, source=outcome.source))
        if outcome.source.startswith("git HEAD"):
            print(message("reset", "committed"))
        return 0
    print(message("reset", "restored", number=args.check, source=outcome.source))
    for region in outcome.restored:
        print(f"  {shown(root / region.path)}:{region.start}  TODO(check {region.check})")
    print(message("reset", "backup", backup=outcome.backup))
    tree = "" if args.tree == "starter" else f" --tree {args.tree}"
    print(message("reset", "undo_how", number=args.check, tree=tree))
    return 0


def undo(root: Path, number: int) -> int:
    """Put back what the last reset of check N replaced and name the files; 2 when it cannot."""
    from ..review.hints import shown
    from ..review.reset import ResetError, undo_reset
    from ..review.texts import message

    try:
        backup, files = undo_reset(root, number)
    except ResetError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    print(message("reset", "undone", number=number, backup=backup))
    for relative in files:
        print(f"  {shown(root / relative)}")
    return 0
