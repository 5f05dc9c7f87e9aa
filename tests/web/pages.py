"""Reading what the dashboard shows out of its HTML, the way a test would look at the page."""

from __future__ import annotations

import html
import re
import time

from flask.testing import FlaskClient

HTMX = {"HX-Request": "true"}


def check_statuses(page: str) -> dict[str, str]:
    """Map each check row's key to the status it shows."""
    return dict(re.findall(r'data-check="([\w-]+)" data-status="([\w ]+)"', page))


def failing_checks(page: str) -> set[str]:
    """The numbered checks shown as failed."""
    return {
        key for key, status in check_statuses(page).items() if key.isdigit() and status == "fail"
    }


def run_ids(page: str) -> list[str]:
    """The run ids in the live table, in the order shown."""
    return re.findall(r'<tr data-run="(\w+)"', page)


def status_of(page: str, run_id: str) -> str:
    """The status the live table shows for one run."""
    found = re.search(rf'<tr data-run="{run_id}" data-status="(\w+)"', page)
    assert found, f"run {run_id} is not in the table"
    return found.group(1)


def last_outcome(page: str) -> str:
    """The sentence the last button left on the page."""
    found = re.search(r'id="last-outcome">(.*?)</p>', page, re.S)
    assert found, "no outcome is shown"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())


def outcome_tone(page: str) -> str:
    """The tone (ok, replay, refused, warn) of the sentence the last button left."""
    found = re.search(r'<p class="outcome (\w+)" role="status" id="last-outcome">', page)
    assert found, "no outcome is shown"
    return found.group(1)


def form_error(page: str) -> str:
    """The visible error a bad form left, or an empty string."""
    found = re.search(r'class="notice error"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>|\s+", " ", found.group(1))).strip() if found else ""


def send(
    client: FlaskClient,
    tree: str,
    message: str = "book me a flight",
    client_id: str = "c-1",
    **extra: str,
) -> tuple[str, str]:
    """Send one message from the runs view; return the new run's id and the fragment."""
    answer = client.post(
        f"/runs/{tree}/send",
        headers=HTMX,
        data={"message": message, "client_message_id": client_id, **extra},
    )
    assert answer.status_code == 200, answer.text
    return run_ids(answer.text)[0], answer.text


def finish(client: FlaskClient, tree: str, run_id: str) -> str:
    """Move a run pending -> running -> done with the buttons; return the fragment."""
    client.post(f"/runs/{tree}/{run_id}/advance", data={"target": "running"}, headers=HTMX)
    return client.post(f"/runs/{tree}/{run_id}/advance", data={"target": "done"}, headers=HTMX).text


def wait_for(client: FlaskClient, url: str, pattern: str, seconds: float = 20) -> str:
    """Poll url like the page does until pattern shows up; return that page."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        page = client.get(url, headers=HTMX).text
        if re.search(pattern, page):
            return page
        time.sleep(0.05)
    raise AssertionError(f"{pattern!r} never appeared at {url}")


def finished_checks(client: FlaskClient, tree: str, store: str = "memory") -> str:
    """Poll the checks fragment like the page does until the run has finished; return it."""
    return wait_for(client, f"/checks?tree={tree}&store={store}", r'data-running="no"', seconds=180)


def diagrams(client: FlaskClient, page: str) -> dict[str, str]:
    """Each finished row's diagram, fetched as the page fetches it when the row is opened."""
    return {
        key: client.get(html.unescape(url), headers=HTMX).text
        for key, url in re.findall(
            r'<details [^>]*data-check="([\w-]+)".*?hx-get="(/checks/diagram/[^"]+)"', page, re.S
        )
    }
