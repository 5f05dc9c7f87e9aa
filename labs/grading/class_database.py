"""The Postgres a class is graded on, checked once, before the first hand-in is graded.

Every hand-in's Postgres checks and migration run on the same server, each
in a database of its own with roles of its own, all made by the same role.
Roles are what keep hand-ins apart there: as the grader's role, one could
connect to a classmate's database. A server that cannot be reached, a role
that lacks what grading needs, or a server that will not let the
submissions' roles log in fails every hand-in alike, but only where the
hand-in got that far: one with no migration fails anyway and keeps those
points in its maximum, one with a migration is "not graded" there, and the
table mixes 70/70 with 40/110. So `labs grade` refuses the whole class
instead (GradingRefusedError, a non-zero exit), with the one fix, before any
hand-in is graded.

On PostgreSQL 15 and older a CREATEROLE role may grant itself any role but
a superuser, pg_execute_server_program included (shell commands as the
server's user), so there the kit never asks for CREATEROLE: it asks for a
superuser on a server kept for grading, or for grading without
DATABASE_URL. From 16 on, CREATEROLE only reaches roles its holder made.
"""

from __future__ import annotations

from labs.pg.tenants import new_names
from labs.term.i18n import _

from .errors import GradingRefusedError
from .on_postgres import Tenant, as_role, ensure_logins
from .on_postgres_roles import (
    connect_admin,
    create_roles,
    drop_roles,
    refuse_without_privileges,
)
from .on_postgres_throwaway import own_cluster
from .on_postgres_url import database_of_its_own


def check_class_database(database_url: str) -> None:
    """Refuse (GradingRefusedError) a server or role no hand-in could be graded on.

    Connects as the grader, checks its privileges (a database per hand-in,
    and roles per hand-in, so that no hand-in reaches a classmate's), then
    makes one hand-in's database and roles, sees the roles log in as a
    submission's would (from a sandbox) and drops them all.
    """
    try:
        admin = connect_admin(database_url)
    except GradingRefusedError as error:
        raise GradingRefusedError(
            _("{error}: is Postgres running, and DATABASE_URL right?").format(error=error)
        ) from None
    try:
        with admin.cursor() as cursor:
            refuse_without_privileges(cursor, roles=True)
    finally:
        admin.close()
    names = new_names()
    with database_of_its_own(database_url) as url:
        admin = connect_admin(url, names.marker)
        try:
            with admin.cursor() as cursor:
                tenant_password, reader_password = create_roles(cursor, names)
                try:
                    ensure_logins(
                        Tenant(
                            names.tenant,
                            as_role(url, names.tenant, tenant_password),
                            as_role(url, names.reader, reader_password),
                        )
                    )
                finally:
                    drop_roles(cursor, names)
        finally:
            admin.close()


def check_throwaway() -> None:
    """Start the grader's own Postgres, which grades without DATABASE_URL, or refuse.

    Nothing to do without server binaries: the migration and the checks on
    Postgres are then not graded, for every hand-in alike.
    """
    try:
        own_cluster()
    except GradingRefusedError as error:
        raise GradingRefusedError(
            _(
                "{error}: the migrations and the checks on Postgres run on it; repair the "
                "PostgreSQL server "
                "install (`python -m labs doctor` checks it), or set DATABASE_URL to a server "
                "kept for grading"
            ).format(error=error)
        ) from None
