"""The race view: the naive check-then-insert duplicates on a real Postgres, the constraint
keeps one row, and without a database, with bad input or from another site nothing races."""

from __future__ import annotations

import html
import inspect
import re
from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from labs.lesson.race import GUARDED, NAIVE, run_race

from .conftest import make_app
from .pages import HTMX, form_error

# Enough racers to show the duplicates, a pause long enough to make them certain, and quick.
SMALL_RACE = {"requests": "6", "delay_ms": "40"}
# Nobody listens on port 1: a configured database that cannot be reached.
UNREACHABLE = "postgresql://lab:lab@127.0.0.1:1/lab"


@pytest.fixture
def race_client(fresh_database: str) -> Iterator[FlaskClient]:
    """A dashboard started with DATABASE_URL pointing at an empty throwaway database."""
    for app in make_app(DATABASE_URL=fresh_database):
        yield app.test_client()


def client_on(url: str) -> Iterator[FlaskClient]:
    """A dashboard configured with url, whatever answers there."""
    for app in make_app(DATABASE_URL=url):
        yield app.test_client()


def visible_text(markup: str) -> str:
    """What a reader sees of some markup: the text, with spacing collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def verdicts(page: str) -> dict[str, dict[str, str]]:
    """Per path, the numbers its outcome cell carries and the sentence it shows."""
    found = re.findall(
        r'<td class="verdict ([\w-]+)" data-path="([^"]+)" data-label="[^"]*"\s+data-rows="(\d+)" '
        r'data-duplicates="(\d+)" data-run-ids="(\d+)">(.*?)</td>',
        page,
        re.S,
    )
    return {
        html.unescape(path): {
            "class": kind,
            "rows": rows,
            "duplicates": duplicates,
            "run_ids": run_ids,
            "says": visible_text(said),
        }
        for kind, path, rows, duplicates, run_ids, said in found
    }


def input_value(page: str, name: str) -> str:
    """The value a form field starts with."""
    found = re.search(rf'<input name="{name}"[^>]*value="([^"]*)"', page)
    assert found, f"the page has no {name} field"
    return found.group(1)


def test_the_page_explains_the_race_and_starts_with_the_commands_defaults(
    race_client: FlaskClient,
) -> None:
    """The page names both paths, says the delay is there, and offers the CLI's defaults."""
    page = race_client.get("/race")
    assert page.status_code == 200
    assert "check-then-insert" in page.text and "ON CONFLICT" in page.text
    assert "The delay is there on purpose" in page.text
    defaults = inspect.signature(run_race).parameters
    assert input_value(page.text, "requests") == str(defaults["requests"].default)
    assert float(input_value(page.text, "delay_ms")) == defaults["delay_ms"].default
    assert 'id="run-race"' in page.text and "No race yet" in page.text
    assert re.search(r'href="/race" aria-current="page">Race<', page.text)


@pytest.mark.parametrize("headers", [HTMX, {}], ids=["htmx fragment", "full page"])
def test_the_naive_path_duplicates_and_the_constraint_keeps_one_row(
    race_client: FlaskClient, headers: dict[str, str]
) -> None:
    """The naive path leaves duplicates; the constraint path leaves one row, one run id.

    How many racers slip through the naive window depends on the machine's load; that
    more than one does, and that each was told its own run id, does not.
    """
    answer = race_client.post("/race", data=SMALL_RACE, headers=headers)
    assert answer.status_code == 200
    assert ("<html" in answer.text) == (headers == {})
    assert '<section id="race-result">' in answer.text
    shown = verdicts(answer.text)
    racers = int(SMALL_RACE["requests"])
    naive, guarded = shown[NAIVE], shown[GUARDED]
    rows = int(naive["rows"])
    assert 2 <= rows <= racers and naive["run_ids"] == naive["rows"]
    assert naive["class"] == "duplicated"
    assert naive["says"].startswith(f"✗ {rows - 1} duplicate row")
    assert guarded["rows"] == guarded["run_ids"] == "1" and guarded["duplicates"] == "0"
    assert guarded["class"] == "one-row" and guarded["says"] == "✓ one row, no duplicates"
    assert f"{racers} concurrent identical requests" in answer.text


def test_without_a_database_the_view_says_so_and_offers_no_button(client: FlaskClient) -> None:
    """No DATABASE_URL: a notice naming it on the page and in the fragment, and nothing to press."""
    page = client.get("/race")
    assert page.status_code == 200 and "No database configured" in page.text
    assert "DATABASE_URL" in page.text and 'id="run-race"' not in page.text
    assert "button" not in visible_text(page.text).lower()  # nothing describes what is not there
    fragment = client.get("/race", headers=HTMX).text
    assert "<html" not in fragment and 'id="no-database"' in fragment
    posted = client.post("/race", data=SMALL_RACE, headers=HTMX)
    assert posted.status_code == 503 and 'id="no-database"' in posted.text


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("requests", "many", "requests must be a whole number, not 'many'"),
        ("requests", "1", "requests must be between 2 and 64, not 1"),
        ("requests", "65", "requests must be between 2 and 64, not 65"),
        ("delay_ms", "", "delay_ms must be a whole number, not ''"),
        ("delay_ms", "-5", "delay_ms must be between 0 and 1000, not -5"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(field: str, value: str, said: str) -> None:
    """A wrong field is a visible 400 before anything connects (the URL here answers nobody)."""
    for client in client_on(UNREACHABLE):
        answer = client.post("/race", data={**SMALL_RACE, field: value}, headers=HTMX)
        assert answer.status_code == 400
        assert visible_text(form_error(answer.text)) == f"Nothing was raced: {said}"


@pytest.mark.parametrize(
    ("url", "named"),
    [
        (UNREACHABLE, "Connection refused"),
        ("mysql://lab:lab@127.0.0.1/lab", "is not Postgres"),
    ],
)
def test_a_database_that_cannot_race_is_a_visible_error(url: str, named: str) -> None:
    """A database nobody answers on, or not Postgres at all: an error on the page, never a 500."""
    for client in client_on(url):
        for headers in (HTMX, {}):
            answer = client.post("/race", data=SMALL_RACE, headers=headers)
            assert answer.status_code == 503
            said = visible_text(form_error(answer.text))
            assert said.startswith("Postgres could not run the race.") and named in said
            assert "Traceback" not in answer.text


@pytest.mark.parametrize(
    "headers", [{"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"}]
)
def test_a_cross_site_post_is_refused_before_anything_races(headers: dict[str, str]) -> None:
    """Another site's form gets a 403 with a reason, not the 503 a connection attempt would."""
    for client in client_on(UNREACHABLE):
        answer = client.post("/race", data=SMALL_RACE, headers=headers)
        assert answer.status_code == 403
        assert "must come from this dashboard" in form_error(answer.text)
