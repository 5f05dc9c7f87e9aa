"""The checks view while the checks run: rows arrive one by one, and only one run goes at a time."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.checking.api import CheckResult
from web.checkruns.rows import build_rows

from .conftest import make_app
from .pages import HTMX, check_statuses, failing_checks, finished_checks, form_error, wait_for

# Appended to the copy's shared/states.py: every transition waits until the gate file exists.
# Check 4 is the first check that moves a run, so checks 1 to 3 finish while it waits.
GATED = """

import os as _os
import time as _time

_ungated_can_transition = can_transition


def can_transition(current: RunStatus, target: RunStatus) -> bool:
    while not _os.path.exists({gate!r}):
        _time.sleep(0.02)
    return _ungated_can_transition(current, target)
"""


@pytest.fixture
def gate(tree_copy: Path, tmp_path: Path) -> Path:
    """A file that does not exist yet; until it does, the copy's check 4 waits."""
    gate = tmp_path / "open-the-gate"
    states = tree_copy / "shared" / "states.py"
    states.write_text(states.read_text() + GATED.format(gate=str(gate)))
    return gate


@pytest.fixture
def gated_app(gate: Path, tree_copy: Path) -> Iterator[Flask]:
    """A dashboard whose starter is the gated copy; the gate is opened at the end in any case."""
    try:
        yield from make_app(TREES={"starter": str(tree_copy), "solution": "solution"})
    finally:
        gate.touch()


def start(client: FlaskClient, tree: str) -> str:
    """Press "Run the checks" for a tree on the memory store; return the first answer."""
    answer = client.post("/checks/run", data={"tree": tree, "store": "memory"}, headers=HTMX)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_rows_arrive_while_the_checks_still_run(gated_app: Flask, gate: Path) -> None:
    """Checks 1 to 3 show their verdicts while check 4 still runs; the page polls until the end."""
    client = gated_app.test_client()
    first = start(client, "starter")
    assert 'data-running="yes"' in first and 'hx-trigger="every' in first
    # Pressed a moment ago: the tree's host is still starting, so no check is said to run yet.
    assert [check_statuses(first)[key] for key in "12"] == ["starting", "waiting"]
    page = wait_for(
        client, "/checks?tree=starter&store=memory", r'data-check="3" data-status="fail"'
    )
    shown = check_statuses(page)
    assert [shown[key] for key in "123456"] == [
        "pass",
        "pass",
        "fail",
        "running",
        "waiting",
        "waiting",
    ]
    assert 'data-running="yes"' in page and "running: " in page
    gate.touch()
    done = finished_checks(client, "starter")
    assert failing_checks(done) == {"3", "4", "5"}
    assert 'hx-trigger="every' not in done and "3 passed, 3 failed" in done


def test_a_second_check_run_is_refused_while_one_goes_on(gated_app: Flask, gate: Path) -> None:
    """While the starter's checks run, asking for the solution's is a 409 naming the busy run."""
    client = gated_app.test_client()
    start(client, "starter")
    busy = client.post("/checks/run", data={"tree": "solution", "store": "memory"}, headers=HTMX)
    assert busy.status_code == 409
    said = form_error(busy.text)
    assert "already going (starter on the memory store" in said and "one at a time" in said
    assert check_statuses(busy.text) == {}  # the solution was never started
    gate.touch()
    finished_checks(client, "starter")
    start(client, "solution")
    assert failing_checks(finished_checks(client, "solution")) == set()


def hosts_of(tree: Path) -> list[int]:
    """The pids of the tree hosts that serve tree, as /proc lists them."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:  # ended meanwhile
            continue
        if b"labs.checking.host" in argv and str(tree).encode() in argv:
            found.append(int(cmdline.parent.name))
    return found


def test_a_dashboard_shutting_down_ends_the_run_and_its_hosts(
    gated_app: Flask, gate: Path, tree_copy: Path
) -> None:
    """While check 4 waits, closing the dashboard kills the tree's hosts and ends the run
    at once, saying why; checks 1 to 3 keep their verdicts."""
    client = gated_app.test_client()
    start(client, "starter")
    wait_for(client, "/checks?tree=starter&store=memory", r'data-check="4" data-status="running"')
    assert hosts_of(tree_copy)
    lab = gated_app.extensions["mini_koda_lab"]
    lab.close()
    run = lab.check_runs[("starter", "memory")]
    assert run.wait(10), "the run did not end"
    assert str(run.error) == "stopped: the dashboard was shutting down"
    assert [row.status for row in run.six[:3]] == ["pass", "pass", "fail"]
    assert run.six[3].status == "fail" and str(run.six[3].message) == str(run.error)
    assert not hosts_of(tree_copy)


def poll_url(page: str) -> str:
    """The address the results' poller asks, as the page holds it."""
    found = re.search(r'<div id="checks-poll"[^>]*hx-get="([^"]+)"', page)
    assert found, "the page does not poll"
    return html.unescape(found.group(1))


def test_a_poll_gets_nothing_while_nothing_changed_and_only_the_changed_rows_after(
    gated_app: Flask, gate: Path
) -> None:
    """While check 4 waits, the poll is an empty 204; once rows change, only they come, out of
    band, without a single diagram; the summary comes into the live region that stays."""
    client = gated_app.test_client()
    start(client, "starter")
    page = wait_for(
        client, "/checks?tree=starter&store=memory", r'data-check="4" data-status="running"'
    )
    waiting = client.get(poll_url(page), headers=HTMX)
    assert waiting.status_code == 204 and waiting.data == b""
    gate.touch()
    finished_checks(client, "starter")
    answer = client.get(poll_url(page), headers=HTMX)
    assert answer.status_code == 200 and "<svg" not in answer.text
    sent = set(
        re.findall(r'<details [^>]*data-check="([\w-]+)"[^>]*hx-swap-oob="true"', answer.text)
    )
    assert "4" in sent and not sent & {"1", "2", "3"}  # those had not changed
    assert re.search(r'id="check-summary" data-state="finished" hx-swap-oob="true"', answer.text)
    assert 'id="checks-status"' not in answer.text  # the live region itself is never replaced
    assert 'hx-trigger="every' not in answer.text  # the run is over: polling stops


def test_the_first_row_is_starting_until_the_run_says_a_check_began() -> None:
    """Before any check began the first row is starting; after one, the first unfinished row
    is running (between two checks too); rows after it wait; an ended run has neither."""
    one = CheckResult("1", 1, "t", passed=True)
    statuses = [
        [row.status for row in build_rows(results, started=started, running=True)][:3]
        for results, started in (([], False), ([], True), ([one], True))
    ]
    assert statuses == [
        ["starting", "waiting", "waiting"],
        ["running", "waiting", "waiting"],
        ["pass", "running", "waiting"],
    ]
    assert {row.status for row in build_rows([], started=False, running=False)} == {"waiting"}
