"""The diff view groups hunks under their checks; the database view needs Postgres."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from labs.trees.diff import tree_diff

from .conftest import make_app
from .pages import HTMX


def test_the_diff_shows_every_hunk_under_its_check(client: FlaskClient) -> None:
    """Each check with a TODO gets a heading, and under it one block per hunk."""
    page = client.get("/diff").text
    expected = tree_diff()
    shown = dict(re.findall(r'data-check="(\d)">(.*?)</article>', page, re.S))
    assert set(shown) == {str(n) for n in expected}
    for number, hunks in expected.items():
        assert shown[str(number)].count('class="hunk"') == len(hunks)
        for hunk in hunks:
            assert hunk.path in shown[str(number)]


def test_the_diff_fragment_comes_alone_for_htmx(client: FlaskClient) -> None:
    """An htmx request gets the hunks without the layout."""
    fragment = client.get("/diff", headers=HTMX).text
    assert fragment.lstrip().startswith('<section id="diff"') and "<html" not in fragment


def test_without_a_database_the_view_says_how_to_configure_one(client: FlaskClient) -> None:
    """No DATABASE_URL: a notice naming it, as page and as fragment, not an error."""
    page = client.get("/database")
    assert page.status_code == 200 and "No database configured" in page.text
    assert "DATABASE_URL" in page.text
    fragment = client.get("/database", headers=HTMX).text
    assert "<html" not in fragment and 'id="no-database"' in fragment


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("postgresql://lab:lab@127.0.0.1:1/lab", "cannot read the database"),
        ("mysql://lab:lab@127.0.0.1/lab", "is not Postgres"),
    ],
)
def test_a_database_that_cannot_be_read_is_a_notice_not_a_traceback(url: str, named: str) -> None:
    """A DATABASE_URL nobody answers on, or not Postgres at all: a readable notice and a 200."""
    for app in make_app(DATABASE_URL=url):
        answer = app.test_client().get("/database")
        assert answer.status_code == 200
        assert "Postgres could not be read" in answer.text and named in answer.text
        assert "Traceback" not in answer.text
