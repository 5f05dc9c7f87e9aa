"""python -m labs selftest TREE: the six checks, as `SELFTEST=1 python -m <tree>` asks for them.

A tree never imports the lab kit: its __main__ hands over to this command with
the tree's own folder (os.execv), and the checks run here, in the kit, as they
do for `python -m labs check`. MOCK=1 or DATABASE_URL picks the store;
LAB_SEED and TRACE work as they always have.
"""

from __future__ import annotations

import argparse

from labs.term.i18n import _
from labs.trees.finding import tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the selftest command."""
    parser = commands.add_parser(
        "selftest",
        help=_("the six checks on a tree, as SELFTEST=1 python -m <tree> runs them"),
        description=_(
            "Run the six self-checks on a tree, on the in-memory store with MOCK=1 or on "
            "Postgres with DATABASE_URL, and print one line per check. LAB_SEED=N repeats a "
            "run's inputs; TRACE=1 prints who called whom in each check. Exit 0 only when "
            "all six pass."
        ),
    )
    parser.add_argument("tree", help=_("the tree's folder (or starter, solution)"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the checks on the tree; the exit code says whether all six passed."""
    from labs.review.selftest import selftest

    return selftest(tree_root(args.tree))
