"""`python -m labs.pg.migrate --versions DIR [--schema NAME] [--tree T]`: a migration, applied.

The kit runs migrations from wherever it is installed: a checkout, or a
root-owned virtualenv (`pip install .`, the Classroom workflow) with no
alembic.ini beside it. So Alembic's Config is built here, in code, around
the environment the kit ships (labs/pg/environment), with the folder of
scripts, the tree and the schema named on the command line; the database is
DATABASE_URL, as for `alembic`. A learner's own commands in the checkout
(`alembic -x tree=starter upgrade head`) read alembic.ini and reach the same
environment.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.util import CommandError

# Alembic's package:folder notation, resolved through the installed labs.pg package.
ENVIRONMENT = "labs.pg:environment"
TREES = ("starter", "solution")


def alembic_config(tree: str, versions: Path, schema: str | None = None) -> Config:
    """Alembic's Config for one tree, one folder of scripts and one schema, without an ini file."""
    settings = Config()
    settings.set_main_option("script_location", ENVIRONMENT)
    settings.set_main_option("path_separator", "os")  # env.py sets version_locations to a path
    options = [f"tree={tree}", f"versions={versions}"] + ([f"schema={schema}"] if schema else [])
    settings.cmd_opts = argparse.Namespace(x=options)
    return settings


def main(argv: list[str] | None = None) -> int:
    """Upgrade the schema to the head of the folder's scripts; exit 1 with Alembic's reason."""
    parser = argparse.ArgumentParser(prog="python -m labs.pg.migrate", description=__doc__)
    parser.add_argument("--versions", required=True, type=Path, help="the folder of scripts")
    parser.add_argument("--schema", help="the Postgres schema (default: the tree's name)")
    parser.add_argument("--tree", default="starter", choices=TREES, help="whose models")
    args = parser.parse_args(argv)
    try:
        command.upgrade(alembic_config(args.tree, args.versions.resolve(), args.schema), "head")
    except CommandError as error:
        print(f"FAILED: {error}", file=sys.stderr)  # as `alembic` says it
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
