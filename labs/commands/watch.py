"""python -m labs watch: save a file, see the six checks rerun."""

from __future__ import annotations

import argparse
import sys
import threading

from labs.review.rerun import watch_tree
from labs.term.i18n import _
from labs.term.keys import single_keys

from . import add_timeout_option, add_tree_option, learner_tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the watch command."""
    parser = commands.add_parser(
        "watch",
        help=_("rerun the self-checks whenever a file of the tree changes"),
        description=_(
            "Run the six self-checks on the in-memory store, then again each time a "
            "file of the tree changes, showing n/6, the first failing check and where to edit. "
            "Uses the operating system's file events (watchfiles) where they work and falls back "
            "to polling every 0.5 s where they do not (or with --poll). Keys: h shows the next "
            "hint for the first failing check, r runs the checks again, q quits (so does Ctrl-C)."
        ),
    )
    add_tree_option(parser)
    parser.add_argument(
        "--poll", action="store_true", help=_("poll for changes instead of using file events")
    )
    add_timeout_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Watch until Ctrl-C; exit 0 then."""
    root = learner_tree_root(args.tree)
    if root is None:
        return 2
    stop = threading.Event()
    with single_keys(sys.stdin):
        try:
            watch_tree(
                root,
                args.tree,
                sys.stdout,
                stop,
                poll=args.poll,
                timeout=args.timeout,
                keys=sys.stdin,
            )
        except KeyboardInterrupt:
            stop.set()
            print()
    print(_("stopped watching"), flush=True)
    return 0
