"""A database of its own for each submission on DATABASE_URL's server (`LAB_POSTGRES=url`).

Where no server binaries are installed, grading runs on the instructor's (or
the learner's) server. There, as on the grader's own cluster, each
submission gets a database of its own, made by the grader's role, which
CREATEDB is enough for:

- nobody but its owner (the grader's role) and the roles granted CONNECT on
  it may connect: CONNECT and TEMPORARY are taken from PUBLIC at once;
- the grader's connection that made it stays open, named for it, until the
  database is dropped at the end: a database named like a grading run's
  (`lab_grade_<token>`) with no such connection is a leftover of a killed
  run, which the next run drops (on_postgres_roles.clean_leftovers), as
  `labs doctor --clean` does;
- DATABASE_URL's own database is only where the grader's connection lives:
  nothing of a submission is made there.

Inside it, on_postgres.migrated_schema gives the submission roles of its own
where the grader's role may make them, and otherwise lets it run as the
grader's role (which is enough to grade one's own work, and never a class:
class_database.py asks a class for roles).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg2
from psycopg2 import sql
from sqlalchemy.engine import make_url

from labs.pg.databases import drop_database
from labs.pg.tenants import new_names

from .errors import GradingRefusedError
from .on_postgres_roles import (
    clean_leftovers,
    connect_admin,
    first_line,
    refuse_without_privileges,
)


def on_database(database_url: str, name: str) -> str:
    """DATABASE_URL with another database name, the rest (role, password, host) as given."""
    return make_url(database_url).set(database=name).render_as_string(hide_password=False)


@contextlib.contextmanager
def database_of_its_own(database_url: str) -> Iterator[str]:
    """A database of one submission's own on DATABASE_URL's server, dropped afterwards.

    Yields the grader's URL for it. GradingRefusedError, before any of the
    submission's code ran, when the server cannot be reached or the role may
    not create databases (the refusal names the grant).
    """
    names = new_names()
    admin = connect_admin(database_url, names.marker)
    try:
        with admin.cursor() as cursor:
            refuse_without_privileges(cursor)
            try:
                clean_leftovers(cursor)
            except psycopg2.Error as error:  # before any of its code ran: the machine's
                raise GradingRefusedError(f"could not tidy up: {first_line(error)}") from None
            database = sql.Identifier(names.tenant)
            try:
                cursor.execute(sql.SQL("CREATE DATABASE {}").format(database))
                cursor.execute(
                    sql.SQL("REVOKE CONNECT, TEMPORARY ON DATABASE {} FROM PUBLIC").format(database)
                )
            except psycopg2.Error as error:
                with contextlib.suppress(psycopg2.Error):
                    drop_database(cursor, names.tenant)
                raise GradingRefusedError(
                    f"could not make a database for the submission: {first_line(error)}"
                ) from None
            try:
                yield on_database(database_url, names.tenant)
            finally:
                with contextlib.suppress(psycopg2.Error):
                    drop_database(cursor, names.tenant)
    finally:
        admin.close()
