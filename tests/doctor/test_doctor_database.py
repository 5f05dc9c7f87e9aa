"""`labs doctor` on a server: reachable, the role's privileges, the auth method, leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import psycopg2
import pytest

from labs.doctor.database import database_findings, guessed_method
from labs.grading.on_postgres_roles import connect_admin, create_roles, drop_roles
from labs.grading.on_postgres_url import on_database
from labs.pg.cluster import TempCluster, free_port
from labs.pg.tenants import Names, new_names
from labs.trees.finding import REPO_ROOT
from tests.support.stock_servers import compose_role, started, superuser, until_accepted


@pytest.fixture(scope="module")
def debian(pg_cluster: TempCluster) -> Iterator[TempCluster]:
    """A cluster as Debian makes it: peer on the socket, scram on TCP."""
    with started(pg_cluster.bindir, auth="debian") as cluster:
        yield cluster


def said(database_url: str | None, clean: bool = False) -> dict[str, str]:
    """The doctor's database lines, verdict by text."""
    return {f.text: f.verdict for f in database_findings(database_url, clean=clean)}


def one(findings: dict[str, str], words: str) -> str:
    """The verdict of the one line that says words."""
    (verdict,) = [v for text, v in findings.items() if words in text]
    return verdict


def test_a_superuser_over_tcp_with_scram_may_grade(
    debian: TempCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian's cluster as its superuser, graded on (LAB_POSTGRES=url): reachable, privileged,
    scram-sha-256, nothing left."""
    monkeypatch.setenv("LAB_POSTGRES", "url")
    found = said(debian.url())
    assert one(found, "DATABASE_URL reaches Postgres 15") == "ok"
    assert one(found, "the role postgres may grade on Postgres") == "ok"
    assert one(found, "logins ask for a password (scram-sha-256)") == "ok"
    assert one(found, "no grading roles, schemas or databases left behind") == "ok"


def test_the_auth_method_is_found_without_a_libpq_warning(
    debian: TempCluster, capfd: pytest.CaptureFixture[str]
) -> None:
    """Guessing the login method, on a server up or down, prints nothing of libpq's own."""
    for url in (debian.url(), f"postgresql://koda:koda@127.0.0.1:{free_port()}/koda"):
        guessed_method(url, over_tcp=True)
    assert "WARNING" not in capfd.readouterr().err


def test_compose_owner_role_is_asked_for_nothing_and_never_for_createrole(
    pg_cluster: TempCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """koda as deploy/postgres-init.sh makes it (CREATEDB), on PostgreSQL 15. Grading on the
    grader's own cluster (the default here) asks it for nothing; on its server
    (LAB_POSTGRES=url) it may grade a submission, and a class is told to use the own cluster,
    never `ALTER ROLE koda CREATEROLE;`, which there could make koda a superuser. Without
    CREATEDB, the one fix is `ALTER ROLE ... CREATEDB;`."""
    with started(pg_cluster.bindir, auth="scram", tcp=True) as cluster:
        koda = compose_role(cluster)
        until_accepted(koda)
        monkeypatch.delenv("LAB_POSTGRES", raising=False)
        assert one(said(koda), "the role koda is asked for nothing") == "ok"
        monkeypatch.setenv("LAB_POSTGRES", "url")
        found = said(koda)
        line = one_line(found, "the role koda may grade a submission on Postgres")
        assert found[line] == "ok" and "cluster of the grader's own" in line
        assert "CREATEROLE" not in line
        assert one(found, "logins ask for a password") == "ok"
        done = subprocess.run(
            [sys.executable, "-m", "labs", "doctor"],
            cwd=REPO_ROOT,
            env={**os.environ, "DATABASE_URL": koda, "LAB_LANG": "en", "LAB_POSTGRES": "url"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "the role koda may grade a submission on Postgres" in done.stdout, done.stdout
        assert "CREATEROLE;" not in done.stdout
        superuser(cluster.url("koda"), "ALTER ROLE koda NOCREATEDB")
        found = said(koda)
        fix = one_line(found, "the role koda may not grade on Postgres")
        assert found[fix] == "fix" and "`ALTER ROLE koda CREATEDB;`" in fix, fix
        assert "CREATEROLE" not in fix


def one_line(found: dict[str, str], start: str) -> str:
    """The one finding that starts so."""
    lines = [line for line in found if line.startswith(start)]
    assert len(lines) == 1, found
    return lines[0]


def test_a_server_that_is_not_there_is_a_fix(pg_cluster: TempCluster) -> None:
    """A URL nothing answers on: one fix line saying so, and nothing claimed about the rest."""
    found = said(f"postgresql://koda:koda@127.0.0.1:{free_port()}/koda")
    assert list(found.values()) == ["fix"]
    assert one(found, "DATABASE_URL is not usable") == "fix"


def test_trust_over_tcp_is_warned_about(pg_cluster: TempCluster) -> None:
    """A server that lets TCP logins in without a password gets a warning that says why."""
    with started(pg_cluster.bindir, tcp=True) as cluster:
        cluster.allow("host all all 127.0.0.1/32 trust")
        url = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
        until_accepted(url)
        assert one(said(url), "logins over TCP are trusted without a password") == "warn"


def test_leftovers_of_a_killed_run_are_named_then_removed_with_clean(debian: TempCluster) -> None:
    """A submission's database, and roles whose schema is in it, no grader holds: a fix naming
    them; --clean removes them all, the database first, whichever token sorts first (the
    roles cannot be dropped while the schema they own stands)."""
    url = debian.create_database("leftovers")
    names, database = Names("0000000000"), Names("ffffffffff")
    admin = connect_admin(url, database.marker)
    with admin.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{database.tenant}"')
    inside = connect_admin(on_database(url, database.tenant), names.marker)
    with inside.cursor() as cursor:
        create_roles(cursor, names)
    inside.close()
    admin.close()  # the grader is gone: what it made is left behind
    assert one(said(url), names.tenant) == "fix"
    assert one(said(url), database.tenant) == "fix"
    assert one(said(url, clean=True), "removed what 2 interrupted grading runs left") == "ok"
    assert one(said(url), "no grading roles, schemas or databases left behind") == "ok"
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'lab_%'")
        assert cursor.fetchone() == (0,)
        cursor.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'lab_%'")
        assert cursor.fetchone() == (0,)
    connection.close()


def test_a_run_still_grading_is_no_leftover(debian: TempCluster) -> None:
    """While the grader's own connection is open, its roles are not touched, --clean or not."""
    url = debian.create_database("alive")
    names = new_names()
    admin = connect_admin(url, names.marker)
    try:
        with admin.cursor() as cursor:
            create_roles(cursor, names)
        assert one(said(url, clean=True), "removed what 0 interrupted grading runs left") == "ok"
        with psycopg2.connect(url) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'lab_%'")
            assert cursor.fetchone() == (2,)
        connection.close()
    finally:
        with admin.cursor() as cursor:
            assert drop_roles(cursor, names) == []
        admin.close()
