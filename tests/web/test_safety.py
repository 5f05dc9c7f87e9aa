"""State-changing requests are POSTs from this dashboard only; it answers loopback names only
and the server binds loopback."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from web.__main__ import main
from web.rendering.fragments import render_view
from web.safety.hosts import ENV_VAR

from .conftest import make_app
from .pages import HTMX, form_error, run_ids

CROSS_SITE = [
    {"Sec-Fetch-Site": "", "Origin": ""},  # neither: curl, a script, a form from a file
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
    {"Origin": "http://evil.example"},
    {"Origin": "http://localhost:9999"},
    {"Origin": "https://localhost"},  # the same host and port, another scheme: another origin
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


def test_a_post_that_names_neither_origin_nor_site_is_refused(app: Flask) -> None:
    """A bare POST, as curl or a script sends it, is refused: 403, and nothing is created."""
    bare = FlaskClient(app)  # no Origin, no Sec-Fetch-Site
    answer = bare.post("/runs/solution/send", data={"message": "bare", "client_message_id": "b"})
    assert answer.status_code == 403
    assert "neither where it comes from" in form_error(answer.text)
    assert run_ids(bare.get("/runs/solution").text) == []
    origin_only = bare.post(
        "/runs/solution/send",
        headers={"Origin": "http://localhost"},
        data={"message": "from the page", "client_message_id": "o"},
    )
    assert origin_only.status_code == 200  # an older browser sends Origin alone: enough


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
    """A link or an image tag cannot trigger a change: those routes answer POST only.

    /checks/run, once in an address bar, sends a GET to the checks page instead.
    """
    answer = client.get(url)
    assert answer.status_code in (404, 405) or (
        answer.status_code == 302 and answer.headers["Location"].startswith("/checks")
    )
    assert run_ids(client.get("/runs/solution").text) == []
    assert "No results yet" in client.get("/checks?tree=starter").text


def served_with(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> dict[str, Any]:
    """Run `python -m web` with argv, with Flask.run replaced; return what it was given."""
    given: dict[str, Any] = {}

    def fake_run(app: Flask, **options: Any) -> None:
        given.update(options, trusted=app.config["TRUSTED_HOST_NAMES"])

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(Flask, "run", fake_run)
    assert main(argv) == 0
    return given


def test_the_command_line_binds_loopback_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """python -m web with no options serves on 127.0.0.1:5000."""
    given = served_with(monkeypatch, [])
    assert (given["host"], given["port"]) == ("127.0.0.1", 5000)


def test_the_command_line_passes_host_port_and_trusted_names_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """--host, --port and --trusted-host reach the server and the Host check."""
    given = served_with(
        monkeypatch, ["--host", "0.0.0.0", "--port", "8123", "--trusted-host", "Lab.Example:8123"]
    )
    assert (given["host"], given["port"]) == ("0.0.0.0", 8123)
    assert "lab.example" in given["trusted"] and "127.0.0.1" in given["trusted"]


FOREIGN_HOSTS = ["evil.example", "evil.example:5000", "127.0.0.1.evil.example", "[::2]:5000", "a:b"]
LOOPBACK_HOSTS = ["127.0.0.1", "127.0.0.1:5000", "localhost", "LOCALHOST:8080", "[::1]:5000"]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
def test_a_foreign_host_header_is_refused_on_get_and_post(client: FlaskClient, host: str) -> None:
    """DNS rebinding: a page served as evil.example gets a 400 naming the Host, and no run."""
    page = client.get("/runs/solution", headers={"Host": host})
    posted = client.post(
        "/runs/solution/send",
        headers={"Host": host, "Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"},
        data={"message": "rebound", "client_message_id": "r"},
    )
    for answer in (page, posted):
        assert answer.status_code == 400
        assert f"refused Host {host!r}" in form_error(answer.text)
    assert run_ids(client.get("/runs/solution").text) == []


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_a_loopback_host_header_is_answered_on_any_port(client: FlaskClient, host: str) -> None:
    """127.0.0.1, localhost and [::1] on any port reach the dashboard, and can send."""
    assert client.get("/runs/solution", headers={"Host": host}).status_code == 200
    answer = client.post(
        "/runs/solution/send",
        headers={**HTMX, "Host": host, "Origin": f"http://{host}"},
        data={"message": "hello", "client_message_id": host},
    )
    assert answer.status_code == 200 and len(run_ids(answer.text)) == 1


def test_a_name_trusted_on_purpose_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    """With WEB_TRUSTED_HOSTS=lab.example the dashboard answers that name, and only it."""
    monkeypatch.setenv(ENV_VAR, "lab.example, other.example")
    for app in make_app():
        client = app.test_client()
        assert client.get("/diff", headers={"Host": "lab.example:5000"}).status_code == 200
        assert client.get("/diff", headers={"Host": "evil.example"}).status_code == 400


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
