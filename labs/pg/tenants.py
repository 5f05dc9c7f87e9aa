"""The names a grading run gives what it makes in Postgres, so that leftovers can be found.

Each submission graded on Postgres gets two roles and a schema: the tenant
(`lab_grade_<token>`, which owns the schema of the same name and
runs the submission's migration and host) and the reader
(`lab_read_<token>`, which the driver reads the tables as). The grader's own
connection carries `lab_grade_<token>` as its application_name for as long
as they live: a name with that token and no such connection is a leftover
of a run that was killed, and the next run (or `labs doctor --clean`) drops it.

Runs may share a server (a class graded several at once, two instructors):
what they change on the database itself goes through `database_grants`.
"""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

TENANT_PREFIX = "lab_grade_"
READER_PREFIX = "lab_read_"
NAME = re.compile(r"lab_(?:grade|read)_(?P<token>[0-9a-f]{10})")
# The advisory lock every grading run takes to change the database's privileges ("lab_acl").
GRANTS_LOCK = int.from_bytes(b"lab_acl", "big")


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


@contextlib.contextmanager
def database_grants(cursor: Any) -> Iterator[None]:
    """Hold the server-wide lock under which grading runs grant or revoke on the database.

    A GRANT or REVOKE ON DATABASE (and DROP OWNED, which revokes too) rewrites
    the database's one row in pg_database; two at once, from two runs, fail
    with "tuple concurrently updated". Taken on the grader's own connection
    (autocommit), held for those few statements, and freed with the session
    if the grader dies.
    """
    cursor.execute("SELECT pg_advisory_lock(%s)", (GRANTS_LOCK,))
    try:
        yield
    finally:
        cursor.execute("SELECT pg_advisory_unlock(%s)", (GRANTS_LOCK,))
