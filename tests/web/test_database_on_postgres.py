"""The database view on a real Postgres: each tree's constraints, requirements and migration."""

from __future__ import annotations

import html
import re

import psycopg2
import pytest
from flask.testing import FlaskClient

from labs.pg.catalog import constraints_report, latest_migration
from tests.support.migrations import migrate
from tests.support.pgcluster import TempCluster

from .conftest import make_app
from .pages import HTMX

pytestmark = pytest.mark.postgres
TREES = ("starter", "solution")


def article(page: str, tree: str) -> str:
    """The part of the page about one tree."""
    found = re.search(
        rf'<article class="schema"[^>]*data-tree="{tree}">(.*?)</article>', page, re.S
    )
    assert found, f"the page has no section for {tree}"
    return found.group(1)


def requirements(section: str) -> dict[int, str]:
    """Map each check a required uniqueness serves to the sentence the page says about it."""
    return {
        int(check): html.unescape(re.sub(r"<[^>]+>|\s+", " ", said)).strip()
        for check, said in re.findall(
            r'<li class="requirement[^"]*" data-check="(\d)"[^>]*>(.*?)</li>', section, re.S
        )
    }


def shown_entries(section: str) -> set[str]:
    """The constraint and index names in a tree's table."""
    return set(re.findall(r'<tr data-entry="([^"]+)"', section))


def database_page(url: str) -> str:
    """The database view of a dashboard started with DATABASE_URL=url."""
    pages = []
    for app in make_app(DATABASE_URL=url):
        answer = app.test_client().get("/database")
        assert answer.status_code == 200
        pages.append(answer.text)
    return pages[0]


def execute(url: str, statement: str) -> None:
    """Run one SQL statement as a learner would in psql."""
    connection = psycopg2.connect(url)
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement)
    finally:
        connection.close()


def test_each_tree_shows_what_postgres_holds_and_what_is_missing(
    both_trees_database: str, starter_revision: str
) -> None:
    """The solution has both uniquenesses; the unfixed starter misses both, naming its TODOs."""
    page = database_page(both_trees_database)
    for tree in TREES:
        expected = {entry.name for entry in constraints_report(both_trees_database, tree)}
        assert expected and shown_entries(article(page, tree)) == expected
    solution = requirements(article(page, "solution"))
    assert sorted(solution) == [3, 5]
    assert all(said.startswith("✓ unique") for said in solution.values())
    starter = requirements(article(page, "starter"))
    assert sorted(starter) == [3, 5]
    for check, said in starter.items():
        assert said.startswith("✗ MISSING") and f"TODO(check {check})" in said


def test_each_tree_shows_its_migration_in_the_database_and_on_disk(
    both_trees_database: str, starter_revision: str
) -> None:
    """The solution is at its newest file; the starter's head is its own generated revision."""
    page = database_page(both_trees_database)
    solution = article(page, "solution")
    assert f'<code class="head">{latest_migration("solution")}</code>' in solution
    assert "✓ up to date" in solution
    starter = article(page, "starter")
    assert f'<code class="head">{starter_revision}</code>' in starter
    # The repository ships no starter migration: the page says how to generate one.
    assert '<em class="latest">none yet</em>' in starter
    assert "alembic -x tree=starter revision --autogenerate" in starter


def test_a_unique_index_the_learner_adds_counts_for_its_check(both_trees_database: str) -> None:
    """A unique index on starter.runs(idempotency_key) satisfies check 3; check 5 stays missing."""
    execute(
        both_trees_database,
        "CREATE UNIQUE INDEX runs_key_by_hand ON starter.runs (idempotency_key)",
    )
    starter = article(database_page(both_trees_database), "starter")
    said = requirements(starter)
    assert said[3].startswith("✓ unique") and "runs_key_by_hand" in said[3]
    assert said[5].startswith("✗ MISSING")
    assert "runs_key_by_hand" in shown_entries(starter)


def test_before_any_migration_each_tree_says_so(fresh_database: str) -> None:
    """An empty database: no tables and no migration for either tree, and no error."""
    page = database_page(fresh_database)
    for tree in TREES:
        section = article(page, tree)
        assert "has none of the lab's tables yet" in section
        assert '<em class="head">none applied</em>' in section


def test_a_tree_migrated_alone_leaves_the_other_empty(fresh_database: str) -> None:
    """Only the solution migrated: its tables show, the starter's schema is still empty."""
    migrate(fresh_database, "solution")
    page = database_page(fresh_database)
    assert requirements(article(page, "solution"))
    assert "has none of the lab's tables yet" in article(page, "starter")


def test_a_database_that_does_not_exist_is_a_notice(pg_cluster: TempCluster) -> None:
    """Postgres answers but the database is not there: its own words, as a notice and a 200."""
    page = database_page(pg_cluster.url("no_such_database"))
    assert 'id="database-down"' in page and "no_such_database" in page
    assert "Traceback" not in page


def test_the_fragment_comes_alone_for_htmx(both_trees_database: str) -> None:
    """An htmx request gets the per-tree sections without the layout."""
    for app in make_app(DATABASE_URL=both_trees_database):
        client: FlaskClient = app.test_client()
        fragment = client.get("/database", headers=HTMX).text
        assert fragment.lstrip().startswith('<section id="database"')
        assert "<html" not in fragment and fragment.count('<article class="schema"') == 2
