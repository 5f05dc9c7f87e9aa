"""State-changing requests are POSTs from this dashboard only; the server binds loopback."""

from __future__ import annotations

import subprocess
import sys

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.trees import REPO_ROOT
from web.render import render_view

from .helpers import HTMX, form_error, run_ids

CROSS_SITE = [
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example"},
    {"Origin": "http://localhost:9999"},
]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_a_cross_site_post_is_refused_and_changes_nothing(
    client: FlaskClient, headers: dict[str, str]
) -> None:
    """Another site's form cannot create runs: 403 with a reason, and the table stays empty."""
    answer = client.post(
        "/runs/solution/send",
        headers=headers,
        data={"message": "from elsewhere", "client_message_id": "x"},
    )
    assert answer.status_code == 403
    assert "must come from this dashboard" in form_error(answer.text)
    assert run_ids(client.get("/runs/solution").text) == []


def test_a_same_origin_post_goes_through(client: FlaskClient) -> None:
    """The dashboard's own htmx request, with its Origin and Sec-Fetch-Site, is accepted."""
    headers = {**HTMX, "Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    answer = client.post(
        "/runs/solution/send", headers=headers, data={"message": "hello", "client_message_id": "c"}
    )
    assert answer.status_code == 200 and len(run_ids(answer.text)) == 1


@pytest.mark.parametrize(
    "url",
    ["/checks/run", "/runs/solution/send?message=hi", "/runs/solution/burst?message=hi&copies=4"],
)
def test_a_get_never_makes_a_change(client: FlaskClient, url: str) -> None:
    """A link or an image tag cannot trigger a change: those routes answer POST only."""
    assert client.get(url).status_code in (404, 405)
    assert run_ids(client.get("/runs/solution").text) == []


def test_the_command_line_binds_loopback_unless_told_otherwise() -> None:
    """python -m web --help documents 127.0.0.1 and port 5000 as the defaults."""
    shown = subprocess.run(
        [sys.executable, "-m", "web", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "default 127.0.0.1" in shown and "default 5000" in shown


def test_an_htmx_reswap_the_library_rejects_is_still_sent(app: Flask) -> None:
    """render_view sets HX-Reswap itself, so afterbegin works despite htmx-flask 0.1.0's list."""
    with app.test_request_context("/diff", headers=HTMX):
        answer = render_view(
            "diff.html",
            "partials/diff_hunks.html",
            {"groups": [], "error": ""},
            reswap="afterbegin",
        )
    assert answer.headers["HX-Reswap"] == "afterbegin"
