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

import pytest

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


def test_compose_owner_role_is_refused_by_name_then_grades_for_full_marks(
    pg_cluster: TempCluster, solved_tree: Path
) -> None:
    """koda as deploy/postgres-init.sh makes it: refused naming one command; with it, full marks."""
    with started(pg_cluster.bindir, auth="scram", tcp=True) as cluster:
        koda = compose_role(cluster)
        until_accepted(koda)
        first = outcomes(solved_tree, koda, ("postgres", "migration"))
        if {o.status for o in first.values()} != {"pass"}:
            assert {o.status for o in first.values()} == {"error"}
            message = first["migration"].message
            assert message.startswith("not graded: grading on Postgres needs more")
            assert commands_in(message) == ["ALTER ROLE koda CREATEROLE;"]
            superuser(cluster.url("koda"), *commands_in(message))
        assert grading_leftovers(cluster.url("koda")) == []
        found = outcomes(solved_tree, koda, GRADED)
        assert {key: o.status for key, o in found.items() if o.status != "pass"} == {}
        assert grading_leftovers(cluster.url("koda")) == []


def test_a_role_without_the_privileges_is_refused_as_the_machines_failure(
    debian: TempCluster, solved_tree: Path, tmp_path: Path
) -> None:
    """The pinned pytest entry: exit 3, results.json "error", each command named, "not graded"."""
    url = debian.create_database("plain")
    superuser(url, "CREATE ROLE teacher LOGIN PASSWORD 'pw'")
    results = tmp_path / "results.json"
    done = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "labs.grading.pytest_main",
            "--lab-tree",
            str(solved_tree),
            "--lab-only",
            "postgres-1,postgres-2,migration",
            "--lab-results",
            str(results),
        ],
        cwd=tmp_path,
        env={**os.environ, "DATABASE_URL": debian.tcp_url("teacher", "pw", "plain")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 3, done.stdout + done.stderr
    document = json.loads(results.read_text(encoding="utf-8"))
    assert document["status"] == "error"
    assert {test["status"] for test in document["tests"]} == {"error"}
    assert (document["score"], document["max_score"]) == (0, 0)
    assert commands_in(document["message"]) == [
        "ALTER ROLE teacher CREATEROLE;",
        "GRANT CREATE ON DATABASE plain TO teacher WITH GRANT OPTION;",
    ]
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
