"""The runs view on a real Postgres: each bench uses its tree's SqlStore and migrated schema.

The rows are counted straight from the tables, so what the page shows is
checked against what Postgres holds. The starter runs on a migration
generated from its unfixed schema, so its bugs reach the database too.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg2
import pytest
from flask.testing import FlaskClient
from sqlalchemy.engine import make_url

from tests.support.migrations import migrate, unfixed_starter_migration
from tests.support.pgcluster import TempCluster, drop_database_of
from web.workbench import workbench as bench_module

from .conftest import make_app
from .pages import HTMX, finish, last_outcome, run_ids, send, status_of, wait_for

pytestmark = pytest.mark.postgres
TREES = ["starter", "solution"]
# The solution refuses the lesson's provocations; the starter, unfixed, lets them through.
LETS_IT_THROUGH = {"starter": True, "solution": False}


def rows(url: str, query: str, *params: object) -> list[tuple[object, ...]]:
    """What Postgres itself returns for query (the page is not trusted here)."""
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(query, params)
            return list(cursor.fetchall())
    finally:
        connection.close()


def run_count(url: str, tree: str) -> int:
    """How many runs the tree's schema holds."""
    ((count,),) = rows(url, f"SELECT count(*) FROM {tree}.runs")
    return int(str(count))


@pytest.mark.parametrize("tree", TREES)
def test_each_bench_says_it_runs_on_postgres(postgres_client: FlaskClient, tree: str) -> None:
    """The runs page names the postgres store and shows no fallback notice."""
    page = postgres_client.get(f"/runs/{tree}").text
    assert "(postgres store)" in page and "memory store instead" not in page


@pytest.mark.parametrize("tree", TREES)
def test_sending_a_message_twice(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """The solution gives the same run id and keeps one row; the starter inserts two."""
    first, _ = send(postgres_client, tree, client_id="twice")
    second, page = send(postgres_client, tree, client_id="twice")
    copies = 2 if LETS_IT_THROUGH[tree] else 1
    assert (first == second) is not LETS_IT_THROUGH[tree]
    assert len(run_ids(page)) == copies
    assert run_count(both_trees_database, tree) == copies


@pytest.mark.parametrize("tree", TREES)
def test_concurrent_duplicates(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """Eight identical requests at once: one row on the solution, eight on the starter."""
    page = postgres_client.post(
        f"/runs/{tree}/burst", data={"message": "hi", "copies": "8"}, headers=HTMX
    ).text
    copies = 8 if LETS_IT_THROUGH[tree] else 1
    assert len(run_ids(page)) == copies
    assert run_count(both_trees_database, tree) == copies


@pytest.mark.parametrize("tree", TREES)
def test_forcing_done_back_to_running(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """The solution refuses done -> running and the row stays done; the starter moves it."""
    run_id, _ = send(postgres_client, tree)
    assert status_of(finish(postgres_client, tree, run_id), run_id) == "done"
    page = postgres_client.post(f"/runs/{tree}/{run_id}/force", headers=HTMX).text
    expected = "running" if LETS_IT_THROUGH[tree] else "done"
    assert status_of(page, run_id) == expected
    assert rows(both_trees_database, f"SELECT status FROM {tree}.runs WHERE id = %s", run_id) == [
        (expected,)
    ]
    if LETS_IT_THROUGH[tree]:
        assert "WENT THROUGH" in last_outcome(page)
    else:
        assert "REFUSED" in last_outcome(page) and "✗ refused ×1" in page


@pytest.mark.parametrize("tree", TREES)
def test_appending_a_duplicate_seq(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """The solution's constraint refuses a second seq 0, leaving one row; the starter has two."""
    run_id, _ = send(postgres_client, tree)
    page = postgres_client.post(f"/runs/{tree}/{run_id}/duplicate-seq", headers=HTMX).text
    stored = rows(both_trees_database, f"SELECT seq FROM {tree}.messages WHERE run_id = %s", run_id)
    assert stored == [(0,)] * (2 if LETS_IT_THROUGH[tree] else 1)
    if LETS_IT_THROUGH[tree]:
        assert "STORED TWICE" in last_outcome(page)
    else:
        assert "REFUSED" in last_outcome(page)
        assert "DuplicateMessageError" in last_outcome(page)


@pytest.mark.parametrize("tree", TREES)
def test_the_demo_executor_plays_a_run_to_done_in_seq_order(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """With the executor on, a run reaches done and its rows read seq 0..n, user first."""
    postgres_client.post(f"/runs/{tree}/demo", data={"switch": "on", "pace": "fast"}, headers=HTMX)
    run_id, _ = send(postgres_client, tree, client_id="demo")
    detail = wait_for(postgres_client, f"/runs/{tree}/{run_id}", r'data-status="done"')
    shown = [int(s) for s in re.findall(r'data-seq="(\d+)" data-kind="message"', detail)]
    stored = rows(
        both_trees_database,
        f"SELECT seq, role FROM {tree}.messages WHERE run_id = %s ORDER BY seq",
        run_id,
    )
    assert [seq for seq, _ in stored] == shown == list(range(len(stored)))
    assert len(stored) > 2 and stored[0][1] == "user"
    assert rows(both_trees_database, f"SELECT status FROM {tree}.runs WHERE id = %s", run_id) == [
        ("done",)
    ]
    wait_for(postgres_client, f"/runs/{tree}", r'data-moving="no"')


def test_a_database_gone_mid_session_is_a_notice_not_a_500(
    postgres_client: FlaskClient, both_trees_database: str, pg_cluster: TempCluster
) -> None:
    """The database disappears after a run was sent: every view answers 503 saying so."""
    run_id, _ = send(postgres_client, "solution")
    drop_database_of(pg_cluster, str(make_url(both_trees_database).database))
    answers = [
        postgres_client.get("/runs/solution"),
        postgres_client.get("/runs/solution", headers=HTMX),
        postgres_client.post(f"/runs/solution/{run_id}/force", headers=HTMX),
        postgres_client.get(f"/runs/solution/{run_id}"),
    ]
    for answer in answers:
        assert answer.status_code == 503
        assert "store did not answer" in answer.text and "Traceback" not in answer.text
    for listing in answers[:3]:  # no "No runs yet", no state counted 0: the runs are unread
        assert 'id="runs-unread"' in listing.text and "No runs yet" not in listing.text
        assert not re.search(r'class="count">0 runs<', listing.text)


def test_a_database_gone_before_the_first_message_is_a_notice_not_a_500(
    postgres_client: FlaskClient, both_trees_database: str, pg_cluster: TempCluster
) -> None:
    """The bench opened on Postgres, then the database went before any session: send says 503."""
    assert "(postgres store)" in postgres_client.get("/runs/solution").text
    drop_database_of(pg_cluster, str(make_url(both_trees_database).database))
    answer = postgres_client.post(
        "/runs/solution/send",
        headers=HTMX,
        data={"message": "anyone there?", "client_message_id": "gone"},
    )
    assert answer.status_code == 503
    assert "store did not answer" in answer.text and "POST /sessions answered 503" in answer.text
    assert run_ids(answer.text) == []


def test_a_bench_on_memory_tries_postgres_again_once_the_tables_are_there(
    fresh_database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the starter's migration its bench falls back to memory and says a reload tries
    again; migrated, the next page load finds Postgres, says so, and lists no memory run."""
    monkeypatch.setattr(bench_module, "RETRY_POSTGRES", 0.0)
    for app in make_app(DATABASE_URL=fresh_database):
        client = app.test_client()
        page = client.get("/runs/starter").text
        assert "(memory store)" in page and "the bench tries Postgres again" in page
        old, _fragment = send(client, "starter", client_id="on-memory")
        again = client.get("/runs/starter").text  # not migrated yet: still memory, run kept
        assert "(memory store)" in again and old in run_ids(again)
        unfixed_starter_migration(fresh_database, tmp_path)
        migrate(fresh_database, "starter", tmp_path)
        moved = client.get("/runs/starter").text
        assert "(postgres store)" in moved and "Postgres opened this time" in moved
        assert run_ids(moved) == [] and "memory store instead" not in moved
        new, _fragment = send(client, "starter", client_id="on-postgres")
        assert run_count(fresh_database, "starter") == 1
        polled = client.get("/runs/starter", headers=HTMX).text
        assert run_ids(polled) == [new]
