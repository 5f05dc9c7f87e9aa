"""Grading on the servers people use: Debian's stock cluster, compose's owner role, any role.

Each either grades a solved tree for full marks with the privileges the kit
documents, or refuses before it grades anything, naming what is missing and
the command that grants it; a refusal is the grading machine's failure
(results.json "error", "not graded"), never the learner's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from labs.grading.class_database import check_class_database
from labs.grading.errors import GradingRefusedError
from labs.pg.cluster import TempCluster
from tests.grading import submissions as make
from tests.grading.postgres_help import grading_leftovers, outcomes, with_real_migration
from tests.support.stock_servers import compose_role, started, superuser, until_accepted

pytestmark = pytest.mark.slow  # clusters set up as stock servers are

GRADED = ("memory", "postgres", "migration")


@pytest.fixture(scope="module")
def debian(pg_cluster: TempCluster) -> Iterator[TempCluster]:
    """A cluster as Debian's pg_createcluster makes it: peer on the socket, scram on TCP."""
    with started(pg_cluster.bindir, auth="debian") as cluster:
        yield cluster


@pytest.fixture
def solved_tree(tmp_path: Path) -> Path:
    """A solved starter with its migration beside it."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    with_real_migration(tree)
    return tree


def test_a_solved_tree_gets_full_marks_on_debians_stock_cluster(
    debian: TempCluster, solved_tree: Path
) -> None:
    """A superuser over TCP with a password: the URL stays TCP, and every criterion passes."""
    url = debian.create_database("graded")
    assert url.startswith("postgresql://postgres:") and "@127.0.0.1:" in url
    found = outcomes(solved_tree, url, GRADED)
    assert {key: o.status for key, o in found.items() if o.status != "pass"} == {}
    assert len(found) == 13
    assert grading_leftovers(url) == []


def commands_in(message: str) -> list[str]:
    """The SQL commands a refusal names, each between backquotes."""
    return re.findall(r"`([^`]+;)`", message)


def pytest_entry(
    tree: Path, results: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    """The pinned pytest entry on tree, from the tree's folder, with env added to this one's."""
    return subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "labs.grading.pytest_main",
            "--lab-tree",
            str(tree),
            "--lab-results",
            str(results),
            *args,
        ],
        cwd=results.parent,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("where", ["url", "own"])
def test_compose_owner_role_grades_itself_for_full_marks_with_no_grant(
    pg_cluster: TempCluster, solved_tree: Path, tmp_path: Path, where: str
) -> None:
    """Issue 22: koda as deploy/postgres-init.sh makes it (CREATEDB, no CREATEROLE), on
    PostgreSQL 15, with DATABASE_URL naming it. The learner's pytest entry grades every
    criterion for full marks on koda's own server (LAB_POSTGRES=url: a database of the
    submission's own, as koda) and on the grader's own cluster (own, the default where the
    server binaries are), asking for no grant; koda's server keeps nothing of either."""
    with started(pg_cluster.bindir, auth="scram", tcp=True) as cluster:
        koda = compose_role(cluster)
        until_accepted(koda)
        results = tmp_path / "results.json"
        done = pytest_entry(solved_tree, results, {"DATABASE_URL": koda, "LAB_POSTGRES": where})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        document = json.loads(results.read_text(encoding="utf-8"))
        assert (document["score"], document["max_score"]) == (110, 110), document
        assert grading_leftovers(cluster.url("koda")) == []
        with psycopg2.connect(cluster.url("koda")) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname LIKE 'lab_%'")
            assert cursor.fetchone() == (0,)
            cursor.execute("SELECT datname FROM pg_catalog.pg_database ORDER BY 1")
            assert [row[0] for row in cursor.fetchall()] == [
                "koda",
                "postgres",
                "template0",
                "template1",
            ]
        connection.close()


def test_compose_owner_role_is_refused_a_class_and_never_asked_for_createrole(
    pg_cluster: TempCluster,
) -> None:
    """A class on koda's server would run every hand-in as koda, able to reach a classmate's
    database: refused before any is graded, with no CREATEROLE to run on PostgreSQL 15 (there
    it could make itself a superuser), told to grade on the grader's own cluster instead."""
    with started(pg_cluster.bindir, auth="scram", tcp=True) as cluster:
        koda = compose_role(cluster)
        until_accepted(koda)
        with pytest.raises(GradingRefusedError) as refused:
            check_class_database(koda)
        message = str(refused.value)
        assert "CREATEROLE would let it make itself a superuser" in message
        assert "cluster of the grader's own" in message
        assert not [c for c in commands_in(message) if "CREATEROLE" in c]
        assert grading_leftovers(cluster.url("koda")) == []


def test_a_role_without_the_privileges_is_refused_as_the_machines_failure(
    debian: TempCluster, solved_tree: Path, tmp_path: Path
) -> None:
    """The pinned pytest entry: exit 3, results.json "error", each command named, "not graded"."""
    url = debian.create_database("plain")
    superuser(url, "CREATE ROLE teacher LOGIN PASSWORD 'pw'")
    results = tmp_path / "results.json"
    server = {"DATABASE_URL": debian.tcp_url("teacher", "pw", "plain"), "LAB_POSTGRES": "url"}
    done = pytest_entry(
        solved_tree, results, server, "--lab-only", "postgres-1,postgres-2,migration"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    document = json.loads(results.read_text(encoding="utf-8"))
    assert document["status"] == "error"
    assert {test["status"] for test in document["tests"]} == {"error"}
    assert (document["score"], document["max_score"]) == (0, 0)
    # One submission needs a database of its own, which CREATEDB allows on any server.
    assert commands_in(document["message"]) == ["ALTER ROLE teacher CREATEDB;"]
    assert "CREATEROLE" not in document["message"]
    assert "not graded: grading on Postgres needs more" in done.stdout
    assert grading_leftovers(url) == []


def test_a_server_that_refuses_the_submissions_login_is_not_graded_never_failed(
    pg_cluster: TempCluster, solved_tree: Path
) -> None:
    """The grader logs in; its roles may not: refused before the learner's code ran, saying why."""
    with started(pg_cluster.bindir, auth="debian") as cluster:
        url = cluster.create_database("koda")
        cluster.allow("host all all 127.0.0.1/32 reject")
        cluster.allow("host all postgres 127.0.0.1/32 scram-sha-256")
        until_accepted(url)
        found = outcomes(solved_tree, url, ("postgres", "migration"))
        assert {o.status for o in found.values()} == {"error"}
        message = found["postgres-1"].message
        assert "cannot log in" in message and "pg_hba.conf" in message, message
        assert grading_leftovers(url) == []
