"""The names a grading run gives what it makes in Postgres, so that leftovers can be found.

Each submission graded on Postgres gets two roles and a schema: the tenant
(`lab_grade_<token>`, which owns the schema of the same name and
runs the submission's migration and host) and the reader
(`lab_read_<token>`, which the driver reads the tables as). On
DATABASE_URL's server, the database made for it is named `lab_grade_<token>`
too, with a token of its own. The grader's own
connection carries `lab_grade_<token>` as its application_name for as long
as they live: a name with that token and no such connection is a leftover
of a run that was killed, and the next run (or `labs doctor --clean`) drops it.

Runs may share a server (a class graded several at once, two instructors):
what they change on the database itself goes through `on_database`.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import psycopg2

TENANT_PREFIX = "lab_grade_"
READER_PREFIX = "lab_read_"
NAME = re.compile(r"lab_(?:grade|read)_(?P<token>[0-9a-f]{10})")
# Postgres's words when two sessions rewrite one catalog row at once (SQLSTATE XX000).
COLLIDED = "tuple concurrently updated"
ATTEMPTS = 100  # tries of a statement that keeps colliding: far more than eight runs at once need


@dataclass(frozen=True)
class Names:
    """The names of one submission's roles and schema, and of the grader's connection."""

    token: str

    @property
    def tenant(self) -> str:
        """The submission's role, and its schema."""
        return f"{TENANT_PREFIX}{self.token}"

    @property
    def reader(self) -> str:
        """The role the driver reads the submission's tables as."""
        return f"{READER_PREFIX}{self.token}"

    @property
    def marker(self) -> str:
        """The application_name of the grader's connection while the two roles live."""
        return f"{TENANT_PREFIX}{self.token}"


def new_names() -> Names:
    """Names no other grading run uses."""
    return Names(secrets.token_hex(5))


def token_of(name: str) -> str | None:
    """The run's token in a role or schema name a grading run gave, or None for other names."""
    found = NAME.fullmatch(name)
    return found["token"] if found else None


def is_tenant_schema(name: str) -> bool:
    """Whether a schema is a submission's own, made for one grading run alone."""
    return name.startswith(TENANT_PREFIX) and token_of(name) is not None


def on_database(cursor: Any, statement: object) -> None:
    """Run a statement on the grader's connection, again while it collides with another run's.

    A GRANT or REVOKE ON DATABASE (and DROP OWNED, which revokes too) rewrites
    the database's one row in pg_database; two at once, from two runs, fail
    with "tuple concurrently updated" and change nothing. The one that failed
    is tried again after a short pause. No lock orders them: an advisory lock
    is one any role on the server may take, a submission's migration
    included, and hold for as long as it likes, so that every other run
    waiting for it would be refused. The connection is in autocommit, so a
    failed try leaves nothing to roll back.
    """
    for attempt in range(1, ATTEMPTS + 1):
        try:
            cursor.execute(statement)
            return
        except psycopg2.Error as error:
            if COLLIDED not in str(error) or attempt == ATTEMPTS:
                raise
        time.sleep(random.uniform(0.002, 0.02) * min(attempt, 10))
