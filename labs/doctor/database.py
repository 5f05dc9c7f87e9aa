"""What the doctor finds on the server DATABASE_URL names: reachable, privileges, auth, leftovers.

The auth method is what the server says: `system_user` on Postgres 16 and
later; on older servers, for a superuser, the first line of pg_hba.conf that
matches this connection (pg_hba_file_rules); otherwise whether a login
without the password gets in.
"""

from __future__ import annotations

import ipaddress
import os
import tempfile
from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg2
from sqlalchemy.engine import make_url

from labs.grading.errors import GradingRefusedError
from labs.grading.on_postgres_roles import (
    Missing,
    clean_leftovers,
    connect_admin,
    leftovers,
    missing_privileges,
)
from labs.grading.server_choice import chosen_server, grading_place
from labs.pg.catalog import psycopg2_url
from labs.sandbox.network import url_needs_network
from labs.term.i18n import _

from . import Finding

PASSWORD_METHODS = ("scram-sha-256", "md5", "password")


def libpq_url(database_url: str) -> str:
    """The URL as libpq reads it (postgresql://, whatever driver name SQLAlchemy was given)."""
    plain = make_url(psycopg2_url(database_url)).set(drivername="postgresql")
    return plain.render_as_string(hide_password=False)


def database_findings(database_url: str | None, clean: bool = False) -> list[Finding]:
    """What the doctor says about DATABASE_URL, in order; clean drops grading leftovers."""
    if not database_url:
        return [
            Finding(
                "info",
                _(
                    "DATABASE_URL is not set: the checks run on memory (MOCK=1); set it to check "
                    "and grade on Postgres"
                ),
            )
        ]
    try:
        url = libpq_url(database_url)
        connection = connect_admin(url)
    except (ValueError, GradingRefusedError) as error:
        return [
            Finding(
                "fix",
                _(
                    "DATABASE_URL is not usable: {error}: is Postgres running, and the URL right?"
                ).format(error=error),
            )
        ]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user, current_setting('server_version')")
            user, version = cursor.fetchone()
            findings = [
                Finding(
                    "ok",
                    _("DATABASE_URL reaches Postgres {version} as {user}").format(
                        version=version, user=user
                    ),
                ),
                privileges(cursor, user, url),
                auth_method(cursor, url),
                leftover_finding(cursor, clean),
            ]
    finally:
        connection.close()
    return findings


def privileges(cursor: Any, user: str, database_url: str) -> Finding:
    """Whether the role may grade on this database, and the commands that grant what it lacks.

    Where grading runs on a cluster of the grader's own (server_choice.py),
    the role is asked for nothing, and the finding says so. No command named
    here grants CREATEROLE on PostgreSQL 15 or older (on_postgres_roles.py).
    """
    try:
        environ = {**os.environ, "DATABASE_URL": database_url}
        own = grading_place(chosen_server(environ=environ)) == "own"
    except ValueError as error:
        return Finding("fix", str(error))
    if own:
        return Finding(
            "ok",
            _(
                "grading on Postgres runs on a cluster of the grader's own (the server binaries "
                "are installed): the role {user} is asked for nothing"
            ).format(user=user),
        )
    missing = missing_privileges(cursor)
    if not missing:
        for_class = missing_privileges(cursor, roles=True)
        if for_class:
            return Finding(
                "ok",
                _(
                    "the role {user} may grade a submission on Postgres, in a database of its "
                    "own; to grade a class there, whose hand-ins need roles of their own: {fixes}"
                ).format(user=user, fixes=fixes(for_class)),
            )
        return Finding("ok", _("the role {user} may grade on Postgres").format(user=user))
    return Finding(
        "fix",
        _("the role {user} may not grade on Postgres: {fixes}").format(
            user=user, fixes=fixes(missing)
        ),
    )


def fixes(missing: list[Missing]) -> str:
    """The commands that grant what is missing, then what to do where no grant is safe."""
    commands = " ".join(f"`{m.command}`" for m in missing if m.command)
    said = [_(m.instead) for m in missing if not m.command]
    if commands:
        said.insert(0, _("run {commands} as a superuser").format(commands=commands))
    return "; ".join(said)


def auth_method(cursor: Any, url: str) -> Finding:
    """The auth method this login went through, with a warning where it asks for nothing."""
    over_tcp = url_needs_network(url)
    method = reported_method(cursor, url, over_tcp) or guessed_method(url, over_tcp)
    if method in ("trust", None) and over_tcp:
        return Finding(
            "warn",
            _(
                "logins over TCP are trusted without a password ({method}): anyone on this "
                "machine, a submission's code included, may log in as any role; use "
                "scram-sha-256 in pg_hba.conf"
            ).format(method=method or _("no password asked")),
        )
    if method in PASSWORD_METHODS:
        return Finding("ok", _("logins ask for a password ({method})").format(method=method))
    return Finding(
        "info",
        _("logins over the socket go through {method}: grading gives its roles passwords").format(
            method=method or _("no password asked (trust or peer)")
        ),
    )


def reported_method(cursor: Any, url: str, over_tcp: bool) -> str | None:
    """The method the server reports for this session, where it reports one."""
    cursor.execute("SELECT current_setting('server_version_num')::int")
    if cursor.fetchone()[0] >= 160000:
        cursor.execute("SELECT system_user")
        found = cursor.fetchone()[0]
        return str(found).partition(":")[0] if found else "trust"
    try:
        cursor.execute(
            "SELECT type, database, user_name, address, netmask, auth_method FROM"
            " pg_catalog.pg_hba_file_rules WHERE error IS NULL ORDER BY line_number"
        )
        rules = cursor.fetchall()
        cursor.execute("SELECT current_user, current_database(), inet_client_addr()::text")
        user, database, client = cursor.fetchone()
    except psycopg2.Error:  # pg_hba_file_rules is for superusers before Postgres 16
        return None
    for kind, databases, users, address, netmask, method in rules:
        if (kind == "local") == over_tcp:
            continue
        if not ({"all", database} & set(databases or [])) or not ({"all", user} & set(users or [])):
            continue
        if over_tcp and not address_matches(client, address, netmask):
            continue
        return str(method)
    return None


def address_matches(client: str | None, address: str | None, netmask: str | None) -> bool:
    """Whether a pg_hba address (with its netmask) covers the client's address."""
    if address == "all":
        return True
    if not client or not address or not netmask:
        return False
    try:
        network = ipaddress.ip_network(f"{address}/{netmask}", strict=False)
        return ipaddress.ip_address(client.split("/")[0]) in network
    except ValueError:
        return False


def guessed_method(url: str, over_tcp: bool) -> str | None:
    """trust when a login without a password gets in over TCP, scram when it is refused.

    Over the socket, getting in without one is trust or peer: None, unknown.
    """
    parts = urlsplit(url)
    if "password" in parse_qs(parts.query):
        return None  # the password rides in the query: nothing to leave out
    login, at, host = parts.netloc.rpartition("@")
    bare = parts._replace(netloc=f"{login.partition(':')[0]}@{host}" if at else host).geturl()
    try:
        # No password file either: only the server decides whether this gets in. The file
        # named does not exist, which libpq skips in silence (it warns about /dev/null).
        with tempfile.TemporaryDirectory() as empty:
            nofile = os.path.join(empty, "pgpass")
            psycopg2.connect(bare, connect_timeout=5, passfile=nofile).close()
    except psycopg2.OperationalError as error:
        return "scram-sha-256" if "password" in str(error) else None
    return "trust" if over_tcp else None


def leftover_finding(cursor: Any, clean: bool) -> Finding:
    """Roles and schemas killed grading runs left, and (with clean) their removal."""
    if clean:
        removed, failed = clean_leftovers(cursor)
        if failed:
            return Finding(
                "fix",
                _("some leftovers of grading runs could not be removed: {problems}").format(
                    problems="; ".join(failed)
                ),
            )
        return Finding(
            "ok",
            _(
                "removed what {count} interrupted grading runs left: their roles, schemas "
                "and databases"
            ).format(count=len(removed)),
        )
    found = leftovers(cursor)
    if not found:
        return Finding("ok", _("no grading roles, schemas or databases left behind"))
    return Finding(
        "fix",
        _(
            "{count} interrupted grading runs left roles, schemas or databases ({names}): "
            "python -m labs doctor --clean"
        ).format(count=len(found), names=", ".join(n.tenant for n in found)),
    )
