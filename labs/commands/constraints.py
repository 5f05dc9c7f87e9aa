"""python -m labs constraints: the unique constraints and indexes Postgres really holds."""

from __future__ import annotations

import argparse
import os
import sys

import wcwidth

from labs.pg.catalog import (
    CatalogError,
    constraints_report,
    latest_migration,
    migration_head,
    required_constraints,
)
from labs.term.i18n import _
from labs.trees.finding import TREE_NAMES


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the constraints command."""
    parser = commands.add_parser(
        "constraints",
        help=_("list the tables' unique constraints and indexes, from pg_catalog"),
        description=_(
            "List the unique constraints and indexes of a tree's tables as Postgres's "
            "own catalog reports them, and say whether both constraints the lab needs are there."
        ),
    )
    parser.add_argument("--tree", choices=TREE_NAMES, default="starter")
    parser.add_argument("--schema", help=_("the Postgres schema (default: the tree's name)"))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_("Postgres URL (default: $DATABASE_URL)"),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the catalog's view; 0 when both required constraints exist, 1 when not, 2 on error."""
    if not args.database_url:
        print(
            _(
                "error: set DATABASE_URL (or pass --database-url), e.g. "
                "postgresql://koda:koda@localhost:5508/koda with compose, "
                "or port 5432 for a local server"
            ),
            file=sys.stderr,
        )
        return 2
    schema = args.schema or args.tree
    try:
        entries = constraints_report(args.database_url, schema)
        applied = migration_head(args.database_url, schema)
    except CatalogError as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    latest = latest_migration(args.tree)
    print(
        _(
            'tree {tree}, Postgres schema "{schema}": migration {applied} (latest file: {latest})'
        ).format(
            tree=args.tree,
            schema=schema,
            applied=applied or _("none applied"),
            latest=latest or _("none yet"),
        )
    )
    if not entries:
        print(
            "  "
            + _(
                'schema "{schema}" has no lab tables yet: create them with '
                "`alembic -x tree={tree} upgrade head`"
            ).format(schema=schema, tree=args.tree)
        )
        return 1
    # The kinds are the words web/views/database.py marks for translation; padded by display
    # width, so the columns line up in Chinese too.
    kinds = {entry.kind: _(entry.kind) for entry in entries}
    kind_width = max(19, *(wcwidth.width(kind) + 1 for kind in kinds.values()))
    width = max(len(e.name) for e in entries)
    for entry in entries:
        kind = wcwidth.ljust(kinds[entry.kind], kind_width)
        print(f"  {entry.table:<9} {kind}{entry.name:<{width}}  {entry.definition}")
    print(_("required by the lab:"))
    requirements = required_constraints(entries)
    for need in requirements:
        if need.present:
            print("  " + _("ok       {need} is unique: {by}").format(need=need, by=need.met_by))
        else:
            print(
                "  "
                + _(
                    "MISSING  {need} is not unique: declare it at TODO(check {check}) in "
                    "{tree}/shared/schema.py, then generate and apply a migration"
                ).format(need=need, check=need.check, tree=args.tree)
            )
    return 0 if all(need.present for need in requirements) else 1
