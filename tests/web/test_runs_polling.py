"""Polling the runs view fetches only what changed: nothing if nothing did, a page if it did."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from .pages import HTMX, run_ids, send

# What one page of 50 runs may weigh, drawn whole (each row with its buttons' ids and, a
# duplicate, its link to the first run): the 163 rows of six bursts once weighed 415 KB. A poll
# from a page that says what it shows gets much less (the tests below).
PAGE_LIMIT = 100_000


def version_of(fragment: str) -> str:
    """The token of what the live section shows, which its poll hands back."""
    found = re.search(r'id="runs-poll" data-moving="\w+" data-version="(\w+)"', fragment)
    assert found, "the live section carries no version"
    return found.group(1)


def test_six_bursts_of_32_keep_each_poll_small(client: FlaskClient) -> None:
    """After 6 bursts of 32 on the starter, an unchanged poll is an empty 204 and a changed one
    is one page of 50 rows."""
    for _burst in range(6):
        answer = client.post(
            "/runs/starter/burst", data={"message": "hi", "copies": "32"}, headers=HTMX
        )
        assert answer.status_code == 200
    first = client.get("/runs/starter", headers=HTMX)
    assert len(run_ids(first.text)) == 50 and len(first.data) < PAGE_LIMIT
    version = version_of(first.text)
    unchanged = client.get(f"/runs/starter?since={version}", headers=HTMX)
    assert unchanged.status_code == 204 and unchanged.data == b""
    run_id, _ = send(client, "starter", client_id="one-more")
    changed = client.get(f"/runs/starter?since={version}", headers=HTMX)
    assert changed.status_code == 200 and len(changed.data) < PAGE_LIMIT
    assert run_ids(changed.text)[0] == run_id and len(run_ids(changed.text)) == 50
    assert version_of(changed.text) != version


def test_a_move_or_a_button_changes_the_token(client: FlaskClient) -> None:
    """Every change a poll must see changes the token: a new run, a move, a refused move."""
    run_id, fragment = send(client, "solution")
    seen = {version_of(fragment)}
    for action, data in (("advance", {"target": "running"}), ("force", {})):
        answer = client.post(f"/runs/solution/{run_id}/{action}", data=data, headers=HTMX)
        seen.add(version_of(answer.text))
    assert len(seen) == 3


def test_a_full_page_load_ignores_the_token(client: FlaskClient) -> None:
    """A browser's own request (a reload) always gets the page, whatever since says."""
    _run_id, fragment = send(client, "solution")
    page = client.get(f"/runs/solution?since={version_of(fragment)}")
    assert page.status_code == 200 and "<html" in page.text


def shown_of(fragment: str) -> str:
    """The digest of what the page shows, which its polls and buttons hand back."""
    found = re.search(r'id="runs-shown" name="shown" value="(\w+)"', fragment)
    assert found, "the live section carries no digest of what it shows"
    return found.group(1)


def swapped_rows(answer: str) -> list[str]:
    """The run ids of the rows an answer swaps in place, out of band."""
    return re.findall(
        r'<tr data-run="(\w+)" data-status="\w+" id="r-\w+" hx-swap-oob="true">', answer
    )


def test_a_poll_naming_what_it_shows_gets_only_the_row_that_changed(client: FlaskClient) -> None:
    """Of 50 rows one moves: the answer is the poller, that one row swapped by id, and the parts
    whose drawing changed (the graph, the journal), not the table."""
    client.post("/runs/starter/burst", data={"message": "hi", "copies": "32"}, headers=HTMX)
    client.post("/runs/starter/burst", data={"message": "ho", "copies": "32"}, headers=HTMX)
    first = client.get("/runs/starter", headers=HTMX)
    ids = run_ids(first.text)
    assert len(ids) == 50
    moved = ids[17]
    client.post(f"/runs/starter/{moved}/advance", data={"target": "running"}, headers=HTMX)
    poll = client.get(
        f"/runs/starter?since={version_of(first.text)}&shown={shown_of(first.text)}", headers=HTMX
    )
    assert poll.status_code == 200 and poll.headers["HX-Retarget"] == "#runs-poll"
    assert swapped_rows(poll.text) == [moved] and len(run_ids(poll.text)) == 1
    assert 'data-status="running"' in poll.text
    assert 'hx-swap-oob="innerHTML:#runs-graph"' in poll.text
    assert 'hx-swap-oob="innerHTML:#runs-table"' not in poll.text
    assert len(poll.data) < len(first.data) / 4


def test_a_button_naming_what_its_page_shows_gets_new_rows_on_top(client: FlaskClient) -> None:
    """A send from a page that shows two runs adds the new row on top, and its outcome."""
    send(client, "solution", client_id="a")
    _run_id, fragment = send(client, "solution", client_id="b")
    answer = client.post(
        "/runs/solution/send",
        data={"message": "again", "client_message_id": "c", "shown": shown_of(fragment)},
        headers=HTMX,
    )
    assert answer.status_code == 200 and answer.headers["HX-Retarget"] == "#runs-poll"
    added = re.search(
        r'<tbody hx-swap-oob="afterbegin:#runs-body">(.*?)</tbody>', answer.text, re.S
    )
    assert added and len(run_ids(added.group(1))) == 1
    assert 'hx-swap-oob="innerHTML:#runs-notices"' in answer.text and "202" in answer.text
    assert swapped_rows(answer.text) == []


def test_a_digest_the_bench_does_not_remember_gets_the_whole_section(client: FlaskClient) -> None:
    """A page from before a restart (or a made-up digest) is drawn again whole."""
    send(client, "solution")
    poll = client.get("/runs/solution?since=0&shown=0123456789abcdef", headers=HTMX)
    assert poll.headers["HX-Retarget"] == "#runs-live" and '<section id="runs-live"' in poll.text


def test_a_refusal_answers_with_its_notice_whatever_the_page_shows(client: FlaskClient) -> None:
    """A bad field from a page naming what it shows still brings the error, in its box."""
    _run_id, fragment = send(client, "solution")
    answer = client.post(
        "/runs/solution/burst",
        data={"message": "x", "copies": "999", "shown": shown_of(fragment)},
        headers=HTMX,
    )
    assert answer.status_code == 400 and 'id="form-error"' in answer.text
    assert 'hx-swap-oob="innerHTML:#runs-notices"' in answer.text
