"""python -m labs checklist: the day's checklist, with what the lab can verify verified."""

from __future__ import annotations

import argparse
import os
import sys

from labs.term.columns import wrap
from labs.term.i18n import _

from ..review import checklist as day
from ..review import texts

MARKS = {day.ItemStatus.DONE: "[x]", day.ItemStatus.OPEN: "[ ]", day.ItemStatus.UNVERIFIED: "[?]"}
STATES = {day.Finding.OK: "ok  ", day.Finding.NO: "no  ", day.Finding.UNKNOWN: "--  "}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the checklist command."""
    parser = commands.add_parser(
        "checklist",
        help=_("the day's checklist, ticked where the lab can verify it"),
        description=_(
            "Show the day's checklist. The lab verifies what it can itself: the six "
            "checks on the in-memory store and on Postgres (with DATABASE_URL), both unique "
            "constraints in Postgres's catalog, your migration, the typecheck, and your marks "
            "from `python -m labs review`. It says what it could not verify, and why; tick those "
            "items yourself with --tick."
        ),
    )
    parser.add_argument("--tree", choices=["starter", "solution"], default="starter")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_("Postgres URL for the checks and the catalog (default: $DATABASE_URL)"),
    )
    parser.add_argument("--schema", help=_("the Postgres schema (default: the tree's name)"))
    parser.add_argument(
        "--quick", action="store_true", help=_("skip the typecheck (it takes about 35 s cold)")
    )
    parser.add_argument("--tick", metavar="ITEM", help=_("tick an item yourself, by its id"))
    parser.add_argument("--untick", metavar="ITEM", help=_("take your tick off an item"))
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Verify and print; exit 0 when every item is done, 1 when not, 2 on a bad item id."""
    for item_id, ticked in ((args.tick, True), (args.untick, False)):
        if item_id:
            try:
                day.tick(item_id, ticked)
            except KeyError as error:
                print(_("error: {error}").format(error=error.args[0]), file=sys.stderr)
                return 2
    labels = texts.load("checklist")["labels"]
    print(labels["working"], file=sys.stderr, flush=True)
    settings = day.Settings(
        tree=args.tree, database_url=args.database_url, schema=args.schema, quick=args.quick
    )
    items = day.checklist(settings)
    print(labels["title"].format(tree=args.tree))
    for item in items:
        heading = f"{MARKS[item.status]} {item.id}: {' '.join(item.text.split())}"
        # Wrapped by terminal columns: a Chinese character takes two.
        print("\n" + "\n".join(wrap(heading, 78, "", "    ")))
        for verification in item.verifications:
            print(f"      {STATES[verification.state]}{verification.text}")
        if not item.verifications:
            print(f"      {labels['self_only'].format(id=item.id)}")
        if item.ticked:
            print(f"      {labels['ticked_by_you']}")
        if item.status == day.ItemStatus.UNVERIFIED and item.verifications:
            print(f"      {labels['unverified']}: --tick {item.id}")
    done = sum(item.status == day.ItemStatus.DONE for item in items)
    print("\n" + labels["summary"].format(done=done, total=len(items)))
    return 0 if done == len(items) else 1
