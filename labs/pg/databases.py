"""Ending other sessions, and dropping a database with whoever is still in it.

Grading ends what a submission's roles left connected before it drops them,
and drops the database a submission was graded in; the scratch databases of
`labs race` and `labs bench`, and the tests' own, are dropped the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg2 import sql


def end_sessions(
    cursor: Any, *, database: str | None = None, roles: Sequence[str] | None = None
) -> None:
    """End every session of these roles, or on that database (by default the cursor's own).

    The cursor's own session is never ended.
    """
    if roles is not None:
        column, names = "usename", list(roles)
    else:
        column, names = "datname", [database or cursor.connection.info.dbname]
    cursor.execute(
        sql.SQL(
            "SELECT pg_catalog.pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity"
            " WHERE {} = ANY(%s) AND pid <> pg_catalog.pg_backend_pid()"
        ).format(sql.Identifier(column)),
        (names,),
    )


def drop_database(cursor: Any, name: str) -> bool:
    """Drop the database of that name that the cursor's role owns, if there is one, ending
    every session on it first (a role may end its own roles'); whether there was one.

    Never the database the cursor is on.
    """
    cursor.execute(
        "SELECT 1 FROM pg_catalog.pg_database WHERE datname = %s AND datname <> current_database()"
        " AND pg_catalog.pg_get_userbyid(datdba) = current_user",
        (name,),
    )
    if cursor.fetchone() is None:
        return False
    end_sessions(cursor, database=name)
    # The server's version came with the connection: no round trip to ask it again.
    force = sql.SQL(" WITH (FORCE)") if cursor.connection.server_version >= 130000 else sql.SQL("")
    cursor.execute(sql.SQL("DROP DATABASE IF EXISTS {}{}").format(sql.Identifier(name), force))
    return True
