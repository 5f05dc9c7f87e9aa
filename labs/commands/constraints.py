"""python -m labs constraints: the unique constraints and indexes Postgres really holds."""

from __future__ import annotations

import argparse
import os
import sys

from ..catalog import (
    CatalogError,
    constraints_report,
    latest_migration,
    migration_head,
    required_constraints,
)
from ..trees import TREE_NAMES


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the constraints command."""
    parser = commands.add_parser(
        "constraints",
        help="list the tables' unique constraints and indexes, from pg_catalog",
        description="List the unique constraints and indexes of a tree's tables as Postgres's "
        "own catalog reports them, and say whether both constraints the lab needs are there.",
    )
    parser.add_argument("--tree", choices=TREE_NAMES, default="starter")
    parser.add_argument("--schema", help="the Postgres schema (default: the tree's name)")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help="Postgres URL (default: $DATABASE_URL)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the catalog's view; 0 when both required constraints exist, 1 when not, 2 on error."""
    if not args.database_url:
        print(
            "error: set DATABASE_URL (or pass --database-url), e.g. "
            "postgresql://koda:koda@localhost:5508/koda",
            file=sys.stderr,
        )
        return 2
    schema = args.schema or args.tree
    try:
        entries = constraints_report(args.database_url, schema)
        applied = migration_head(args.database_url, schema)
    except CatalogError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    latest = latest_migration(args.tree)
    print(
        f'tree {args.tree}, Postgres schema "{schema}": migration {applied or "none applied"}'
        f" (latest file: {latest or 'none yet'})"
    )
    if not entries:
        print(
            f'  schema "{schema}" has no lab tables yet: create them with '
            f"`alembic -x tree={args.tree} upgrade head`"
        )
        return 1
    width = max(len(e.name) for e in entries)
    for entry in entries:
        print(f"  {entry.table:<9} {entry.kind:<18} {entry.name:<{width}}  {entry.definition}")
    print("required by the lab:")
    requirements = required_constraints(entries)
    for need in requirements:
        if need.present:
            print(f"  ok       {need} is unique: {need.met_by}")
        else:
            print(
                f"  MISSING  {need} is not unique: declare it at TODO(check {need.check}) in "
                f"{args.tree}/shared/schema.py, then generate and apply a migration"
            )
    return 0 if all(need.present for need in requirements) else 1
