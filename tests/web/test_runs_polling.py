"""Polling the runs view fetches only what changed: nothing if nothing did, a page if it did."""

from __future__ import annotations

import re

from flask.testing import FlaskClient

from .pages import HTMX, run_ids, send

# What one page of 50 runs may weigh: the 163 rows of six bursts once weighed 415 KB.
PAGE_LIMIT = 80_000


def version_of(fragment: str) -> str:
    """The token of what the live section shows, which its poll hands back."""
    found = re.search(r'id="runs-live" data-moving="\w+" data-version="(\w+)"', fragment)
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
