"""Runs the bench remembers, gone from Postgres behind its back: a notice and a 404, never a 500.

The rows are deleted, or the tree's tables are dropped and created again
with alembic (the README's advice after an "is duplicated" error), while
the dashboard keeps running.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from alembic import command
from flask.testing import FlaskClient

from labs.pg.cluster import Autocommit
from tests.support.migrations import alembic_config, migrate

from .pages import HTMX, form_error, run_ids, send

pytestmark = pytest.mark.postgres
TREES = ["starter", "solution"]


def gone_notice(page: str) -> str:
    """The one-line notice about runs that left the database, or an empty string."""
    found = re.search(r'id="runs-gone"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>|\s+", " ", found.group(1))).strip() if found else ""


def delete_everything(url: str, tree: str) -> None:
    """Empty the tree's tables straight in Postgres, as a learner's psql session would."""
    with Autocommit(url) as cursor:
        cursor.execute(f"TRUNCATE {tree}.messages, {tree}.runs, {tree}.sessions")


def downgrade(url: str, tree: str, versions: Path | None) -> None:
    """`alembic -x tree=<tree> downgrade base`: the tree's tables are dropped."""
    command.downgrade(alembic_config(url, tree, versions), "base")


@pytest.mark.parametrize("tree", TREES)
def test_runs_deleted_behind_the_benchs_back_leave_the_table_with_a_notice(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """The rows are deleted: the page answers 200 without those runs and says why in one line."""
    send(postgres_client, tree, client_id="first")
    send(postgres_client, tree, client_id="second")
    delete_everything(both_trees_database, tree)
    for answer in (postgres_client.get(f"/runs/{tree}"), postgres_client.get(f"/runs/{tree}")):
        assert answer.status_code == 200
        assert run_ids(answer.text) == []
        notice = gone_notice(answer.text)
        assert "2 runs" in notice and "no longer in the database" in notice


@pytest.mark.parametrize("tree", TREES)
def test_the_tables_migrated_again_let_the_bench_go_on_without_a_restart(
    postgres_client: FlaskClient,
    both_trees_database: str,
    tree_versions: dict[str, Path | None],
    tree: str,
) -> None:
    """After downgrade base and upgrade head, sending works again and shows only the new run."""
    old, _ = send(postgres_client, tree, client_id="before")
    downgrade(both_trees_database, tree, tree_versions[tree])
    migrate(both_trees_database, tree, tree_versions[tree])
    new, page = send(postgres_client, tree, client_id="after")
    assert run_ids(page) == [new] and new != old
    assert "1 run " in gone_notice(page)
    assert postgres_client.get(f"/runs/{tree}/{new}").status_code == 200


@pytest.mark.parametrize("tree", TREES)
def test_a_vanished_runs_page_is_a_404_saying_it_left_the_database(
    postgres_client: FlaskClient, both_trees_database: str, tree: str
) -> None:
    """Its page answers 404 with the reason, before and after the table dropped the run."""
    run_id, _ = send(postgres_client, tree)
    delete_everything(both_trees_database, tree)
    first = postgres_client.get(f"/runs/{tree}/{run_id}")
    postgres_client.get(f"/runs/{tree}")  # the table forgets it
    again = postgres_client.get(f"/runs/{tree}/{run_id}")
    for answer in (first, again):
        assert answer.status_code == 404
        assert run_id in answer.text and "no longer in the database" in answer.text


@pytest.mark.parametrize("action", ["advance", "force", "duplicate-seq", "again"])
def test_a_button_on_a_vanished_run_says_so(
    postgres_client: FlaskClient, both_trees_database: str, action: str
) -> None:
    """A button pressed on a row whose run was deleted answers with a notice naming the run."""
    run_id, _ = send(postgres_client, "solution")
    delete_everything(both_trees_database, "solution")
    answer = postgres_client.post(
        f"/runs/solution/{run_id}/{action}", data={"target": "running"}, headers=HTMX
    )
    assert answer.status_code == 404
    assert run_id in form_error(answer.text) and "no longer in the database" in answer.text
    assert run_ids(answer.text) == []


@pytest.mark.parametrize("tree", TREES)
def test_missing_tables_name_the_alembic_command_not_a_stopped_database(
    postgres_client: FlaskClient,
    both_trees_database: str,
    tree_versions: dict[str, Path | None],
    tree: str,
) -> None:
    """Between downgrade and upgrade the page answers 503 naming the command that fixes it."""
    send(postgres_client, tree)
    downgrade(both_trees_database, tree, tree_versions[tree])
    answer = postgres_client.get(f"/runs/{tree}", headers=HTMX)
    assert answer.status_code == 503
    said = form_error(answer.text)
    assert f"`alembic -x tree={tree} upgrade head`" in said and "then reload" in said
    assert "start the database" not in said
