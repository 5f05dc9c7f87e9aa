"""The six checks on Postgres for one submission, in a schema its own migration built."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import psycopg2

from labs.checking.rules import CHECK_NUMBERS
from labs.pg.errors import NotPlainTablesError

from .criteria import Outcome
from .errors import GradingRefusedError, MigrationFailedError
from .indexes import read_indexes
from .isolate import check_outcomes
from .migration import migration_files, no_migration_message
from .migration_flaws import blame, migration_flaws
from .on_postgres import NOT_GRADED, after_migration, migrated_schema, not_plain
from .on_postgres_throwaway import grading_server
from .server_choice import NO_SERVER


def postgres_outcomes(
    database_url: str | None,
    tree: Path,
    graded_tree: Path,
    migrations: Path | None,
    *,
    timeout: float,
    migration_timeout: float,
) -> dict[int, Outcome]:
    """The six checks against a schema the submission's migration (beside `tree`) built.

    The host runs `graded_tree` and logs in as the submission's role; the
    driver reads the tables as the reader, after the catalog showed them plain.
    Without database_url, on a database of its own on the grader's cluster
    (on_postgres_throwaway.py); without that either, not graded.
    A failure that follows from a flaw of the migration (a deferrable key, an
    index on an expression, a uniqueness schema.py declares and the migration
    lacks) is pointed at the migration's line (migration_flaws.py).
    """
    files = migration_files(tree, migrations)
    if not files:
        reason = "no migration of the tree's own to apply to Postgres: " + no_migration_message(
            tree, migrations
        )
        return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", reason, ran=False))
    try:
        with grading_server(database_url) as server:
            if server is None:
                return dict.fromkeys(CHECK_NUMBERS, Outcome("skip", NO_SERVER))
            with migrated_schema(server, files[0].parent, migration_timeout) as tenant:
                indexes = read_indexes(tenant.reader_url, tenant.schema)
                flaws = migration_flaws(indexes, files, graded_tree)
                return check_outcomes(
                    graded_tree,
                    "postgres",
                    timeout=timeout,
                    database_url=tenant.reader_url,
                    tenant_url=tenant.url,
                    schema=tenant.schema,
                    explain=partial(blame, flaws=flaws),
                )
    except GradingRefusedError as error:
        return dict.fromkeys(CHECK_NUMBERS, Outcome("error", f"{NOT_GRADED}{error}"))
    # The checks could not run: no tables of the submission's own to run them on.
    except MigrationFailedError as error:
        return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", str(error), ran=False))
    except NotPlainTablesError as error:
        return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", not_plain(error), ran=False))
    except psycopg2.Error as error:  # reading the tables the migration left
        return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", after_migration(error), ran=False))
