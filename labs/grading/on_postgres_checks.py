"""A submission on Postgres: its own migration applied once, then judged and checked.

One migration serves two criteria: the migration criterion reads the
indexes it left (migration.py), and the six checks run against the tables
it built. A class's grading applies each submission's migration once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psycopg2

from labs.checking.rules import CHECK_NUMBERS
from labs.pg.errors import NotPlainTablesError

from .criteria import Outcome
from .errors import GradingRefusedError, MigrationFailedError
from .indexes import read_indexes
from .isolate import check_outcomes
from .migration import migration_files, migration_verdict, no_migration_message
from .migration_flaws import blame, migration_flaws
from .on_postgres import NOT_GRADED, after_migration, migrated_schema, not_plain
from .on_postgres_throwaway import grading_server
from .server_choice import NO_SERVER


@dataclass
class OnPostgres:
    """The migration criterion's outcome, and the six checks' (empty when not asked for)."""

    migration: Outcome
    checks: dict[int, Outcome] = field(default_factory=dict)


def grade_on_postgres(
    database_url: str | None,
    tree: Path,
    graded_tree: Path,
    migrations: Path | None,
    *,
    timeout: float,
    migration_timeout: float,
    checks: bool = True,
) -> OnPostgres:
    """The migration (beside `tree`) applied once in a schema of its own, judged, then checked.

    The host runs `graded_tree` and logs in as the submission's role; the
    driver reads the tables as the reader, after the catalog showed them plain.
    Without database_url, on a database of its own on the grader's cluster
    (on_postgres_throwaway.py); without that either, not graded.
    A check's failure that follows from a flaw of the migration (a deferrable
    key, an index on an expression, a uniqueness schema.py declares and the
    migration lacks) is pointed at the migration's line (migration_flaws.py).
    With checks False only the migration is judged.
    """

    def both(migration: Outcome, check: Outcome) -> OnPostgres:
        return OnPostgres(migration, dict.fromkeys(CHECK_NUMBERS, check) if checks else {})

    files = migration_files(tree, migrations)
    if not files:
        missing = no_migration_message(tree, migrations)
        reason = "no migration of the tree's own to apply to Postgres: " + missing
        return both(Outcome("fail", missing), Outcome("fail", reason, ran=False))
    migration: Outcome | None = None
    try:
        with grading_server(database_url) as server:
            if server is None:
                return both(Outcome("skip", NOT_GRADED + NO_SERVER), Outcome("skip", NO_SERVER))
            with migrated_schema(server, files[0].parent, migration_timeout) as tenant:
                indexes = read_indexes(tenant.reader_url, tenant.schema)
                migration = migration_verdict(indexes, files, tree, database_url)
                if not checks:
                    return OnPostgres(migration)
                flaws = migration_flaws(indexes, files, graded_tree)
                outcomes = check_outcomes(
                    graded_tree,
                    "postgres",
                    timeout=timeout,
                    database_url=tenant.reader_url,
                    tenant_url=tenant.url,
                    schema=tenant.schema,
                    explain=partial(blame, flaws=flaws),
                )
                return OnPostgres(migration, outcomes)
    except GradingRefusedError as error:
        refused = Outcome("error", f"{NOT_GRADED}{error}")
        return both(migration or refused, refused)
    # The checks could not run: no tables of the submission's own to run them on.
    except MigrationFailedError as error:
        return both(Outcome("fail", str(error)), Outcome("fail", str(error), ran=False))
    except NotPlainTablesError as error:
        return both(Outcome("fail", not_plain(error)), Outcome("fail", not_plain(error), ran=False))
    except psycopg2.Error as error:  # reading the tables the migration left
        failed = after_migration(error)
        return both(migration or Outcome("fail", failed), Outcome("fail", failed, ran=False))


def judge_migration(
    tree: Path,
    migrations: Path | None = None,
    database_url: str | None = None,
    timeout: float = 120.0,
) -> Outcome:
    """The migration criterion alone, from what Postgres holds after the tree's migration ran."""
    return grade_on_postgres(
        database_url,
        tree,
        tree,
        migrations,
        timeout=timeout,
        migration_timeout=timeout,
        checks=False,
    ).migration
