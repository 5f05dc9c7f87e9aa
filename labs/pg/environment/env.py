"""One Alembic environment for both trees: `alembic -x tree=starter|solution <command>`.

It ships inside the kit (alembic.ini's `script_location = labs.pg:environment`),
so an installed kit runs a submission's migration without a checkout
(labs/pg/migrate.py). The tree decides three things: which models
autogenerate compares against (the tree's shared/schema.py), which folder
holds its migrations (<versions_root>/<tree>/, where alembic.ini's
versions_root is migrations/versions beside it), and which Postgres schema
holds its tables and its alembic_version table (a schema named after the
tree). Options:

    -x tree=starter|solution   required
    -x schema=NAME             another Postgres schema (default: the tree's name)
    -x versions=DIR            another folder of migrations (tests and grading name one)

The database is DATABASE_URL.
"""

from __future__ import annotations

import os
import re
from logging.config import fileConfig
from pathlib import Path

from alembic import context
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from psycopg2.errorcodes import UNIQUE_VIOLATION
from sqlalchemy import MetaData, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.pool import NullPool

from labs.pg.catalog import psycopg2_url
from labs.trees.finding import load_tree

TREES = ("starter", "solution")
SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
config = context.config


def chosen_tree() -> str:
    """The tree named with -x tree=..., or a CommandError saying how to name one."""
    tree = context.get_x_argument(as_dictionary=True).get("tree", "")
    if tree not in TREES:
        raise CommandError(
            f"choose a tree with -x, e.g. `alembic -x tree=starter {command_name()}` "
            f"(trees: {', '.join(TREES)}; got {tree or 'none'!r})"
        )
    return tree


def command_name() -> str:
    """The Alembic command being run, for messages (upgrade head, current, ...)."""
    opts = config.cmd_opts
    if opts is None or not hasattr(opts, "cmd"):
        return "upgrade head"
    name: str = opts.cmd[0].__name__
    return f"{name} head" if name in ("upgrade", "revision") else name


def use_versions_folder(folder: Path) -> None:
    """Make this run of Alembic read and write only the tree's migrations.

    Alembic builds its ScriptDirectory from version_locations before env.py
    runs, and the -x options only exist from here on. So set the option now,
    build a fresh ScriptDirectory from it with Alembic's own from_config, and
    move its state into the instance the running command already holds. No
    revision has been read yet at this point (Alembic reads them lazily), so
    every command, autogenerate included, only ever sees this folder.
    """
    config.set_main_option("version_locations", str(folder).replace("%", "%%"))
    fresh = ScriptDirectory.from_config(config)
    vars(context.script).clear()
    vars(context.script).update(vars(fresh))


def target_metadata(tree: str) -> MetaData:
    """The tables its shared/schema.py declares, imported by the lab kit.

    The kit gives each tree's tables a registry of their own, so the starter and the
    solution can both be imported by one process (tests run Alembic in theirs); the
    metadata is then the one a table carries, not SQLModel's default.
    """
    schema_module = load_tree(tree).module("shared.schema")
    metadata: MetaData = schema_module.Run.__table__.metadata
    return metadata


def database_url() -> str:
    """DATABASE_URL for psycopg2, or a CommandError saying how to set it."""
    # A URL set on the Config (by code that runs Alembic in-process) wins over the shell's.
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        raise CommandError(
            "set DATABASE_URL first, e.g. DATABASE_URL=postgresql://koda:koda@localhost:5508/koda "
            "for docker compose's Postgres, or ...@localhost:5432/koda for a local server"
        )
    try:
        return psycopg2_url(url)
    except ValueError as error:
        raise CommandError(str(error)) from None


def versions_root() -> Path:
    """Where each tree's folder of migrations lives: alembic.ini's versions_root."""
    root = config.get_main_option("versions_root")
    if not root:
        raise CommandError(
            "no folder of migrations: run alembic from the lab's checkout (its alembic.ini "
            "names migrations/versions), or pass -x versions=DIR"
        )
    return Path(root)


def refuse_empty_folder(tree: str, folder: Path) -> None:
    """upgrade/downgrade/stamp with no migration would do nothing, silently: say why instead."""
    try:
        context.get_revision_argument()
    except KeyError:  # commands without a target revision (revision, current) have none
        return
    if any(folder.glob("*.py")):
        return
    raise CommandError(
        f"{folder} holds no migration yet: generate it with "
        f'`alembic -x tree={tree} revision --autogenerate -m "create tables"`, '
        f"read it, then run `alembic -x tree={tree} upgrade head`"
    )


def run_offline(url: str, schema: str, metadata: MetaData) -> None:
    """--sql: print the SQL instead of running it."""
    context.configure(
        url=url, target_metadata=metadata, literal_binds=True, dialect_opts={"paramstyle": "named"}
    )
    with context.begin_transaction():
        context.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        context.execute(f'SET search_path TO "{schema}"')
        context.run_migrations()


def run_online(url: str, schema: str, metadata: MetaData) -> None:
    """Create the schema if needed, then migrate with it as the only search_path entry.

    The search_path is set when the connection opens (libpq's options), so
    SQLAlchemy takes the tree's schema as the default schema: unqualified
    tables, the alembic_version table and autogenerate's reflection all stay
    inside it, and nothing touches public or the other tree's schema.
    """
    with create_engine(url, poolclass=NullPool).begin() as setup:
        setup.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
    engine = create_engine(
        url, poolclass=NullPool, connect_args={"options": f"-c search_path={schema}"}
    )
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=metadata)
        with context.begin_transaction():
            context.run_migrations()


def first_line(error: Exception) -> str:
    """The driver's own first line, without SQLAlchemy's SQL and background link."""
    cause = getattr(error, "orig", None) or error
    return (str(cause).strip().splitlines() or [type(cause).__name__])[0]


def duplicates_in_the_way(tree: str, error: IntegrityError) -> CommandError:
    """A unique constraint that cannot be built because stored rows already repeat a key."""
    diagnostics = getattr(error.orig, "diag", None)
    # Postgres's detail names the key and the value stored twice: Key (...)=(...) is duplicated.
    duplicated = getattr(diagnostics, "message_detail", None) or ""
    return CommandError(
        f"the migration stopped: {first_line(error)}"
        + (f" ({duplicated.strip().rstrip('.')})" if duplicated else "")
        + ". Rows stored by earlier runs, before the constraint existed, are in the way. "
        f"On a lab database start over with `alembic -x tree={tree} downgrade base` and then "
        f'`alembic -x tree={tree} upgrade head` (README, "On Postgres")'
    )


def unreachable(url: str, error: OperationalError) -> CommandError:
    """Postgres down, a wrong port or password: say where we looked and what to check."""
    where = make_url(url)
    return CommandError(
        f"could not use Postgres at {where.host or 'localhost'}:{where.port or 5432}"
        f"/{where.database or ''}: {first_line(error)}. Is Postgres running "
        "(`docker compose up -d` serves it on localhost:5508; a local server usually "
        "listens on 5432), and is DATABASE_URL right, user and password included?"
    )


def run_guarded(tree: str, url: str, schema: str, metadata: MetaData) -> None:
    """run_online, with the two failures a learner meets most told in one line each.

    Alembic prints a CommandError as `FAILED: <message>` without a traceback,
    where anything else would be some 80 lines of SQLAlchemy and psycopg2.
    """
    try:
        run_online(url, schema, metadata)
    except IntegrityError as error:
        # Told by its SQLSTATE, never by its words: a server may word its messages in the
        # language of its lc_messages.
        if getattr(error.orig, "pgcode", None) == UNIQUE_VIOLATION:
            raise duplicates_in_the_way(tree, error) from None
        raise CommandError(
            f"the migration stopped: {first_line(error)}. Stored rows break a rule the "
            "migration adds; on a lab database, start over with "
            f"`alembic -x tree={tree} downgrade base` and `upgrade head`"
        ) from None
    except OperationalError as error:
        raise unreachable(url, error) from None


def main() -> None:
    """Choose the tree, then run the command against its folder, models and schema."""
    if config.config_file_name and config.attributes.get("configure_logger", True):
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    tree = chosen_tree()
    options = context.get_x_argument(as_dictionary=True)
    schema = options.get("schema", tree)
    if not SCHEMA_NAME.fullmatch(schema):
        raise CommandError(f"-x schema={schema!r} is not a plain lower-case Postgres name")
    folder = (
        Path(options["versions"]).resolve() if "versions" in options else versions_root() / tree
    )
    use_versions_folder(folder)
    refuse_empty_folder(tree, folder)
    metadata = target_metadata(tree)
    if context.is_offline_mode():
        run_offline(database_url(), schema, metadata)
    else:
        run_guarded(tree, database_url(), schema, metadata)


main()
