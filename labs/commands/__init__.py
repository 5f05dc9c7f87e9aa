"""One module per python -m labs command, and what several of them share.

Every command's module is imported to build the top-level help, so each one
imports its libraries inside the function that runs it: `labs --help` and
`labs selftest` pay for no other command's imports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labs.term.i18n import _
from labs.trees.finding import tree_root


def learner_tree_root(name: str) -> Path | None:
    """The folder of the tree named (starter, solution or a path), or None after saying why not."""
    root = tree_root(name)
    if not (root / "__init__.py").is_file():
        from ..review.texts import message  # the texts load only when there is this to say

        not_a_tree = message("common", "not_a_tree", root=root)
        print(_("error: {error}").format(error=not_a_tree), file=sys.stderr)
        return None
    return root


def add_tree_option(parser: argparse.ArgumentParser) -> None:
    """--tree: the tree a learner's command runs the checks on (default: starter)."""
    parser.add_argument(
        "--tree",
        default="starter",
        help=_("starter, solution, or the path of a copy of the starter tree"),
    )


def add_timeout_option(parser: argparse.ArgumentParser) -> None:
    """--timeout: how long a check may hang before it counts as failed."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help=_("seconds before a hanging check counts as failed (default: 10)"),
    )
