"""The checks view runs the checks in a child process and shows rows, hints and diagrams."""

from __future__ import annotations

import html
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.checking.api import CHECKS, EXTRA_CHECKS
from labs.trees.finding import REPO_ROOT

from .conftest import make_app
from .pages import (
    HTMX,
    check_statuses,
    diagrams,
    failing_checks,
    finished_checks,
    form_error,
)

# What the lab promises: the starter as shipped fails exactly these; the solution none.
PROMISED_FAILURES = {"starter": {"3", "4", "5"}, "solution": set()}


def run_checks(client: FlaskClient, tree: str, **headers: str) -> str:
    """Press "Run the checks" for a tree on the memory store; return the finished results.

    htmx gets the results section; a form posted without it is sent to the page's address.
    """
    answer = client.post("/checks/run", data={"tree": tree, "store": "memory"}, headers=headers)
    if headers.get("HX-Request"):
        assert answer.status_code == 200, answer.text
    else:
        assert answer.status_code == 303, answer.text
        assert answer.headers["Location"] == f"/checks?tree={tree}&store=memory"
    return finished_checks(client, tree)


@pytest.fixture
def learner_app(tree_copy: Path) -> Iterator[Flask]:
    """A dashboard whose starter is a private copy."""
    yield from make_app(TREES={"starter": str(tree_copy), "solution": "solution"})


@pytest.fixture
def impatient_app(tree_copy: Path) -> Iterator[Flask]:
    """A dashboard whose starter is a private copy, checked with a short timeout."""
    yield from make_app(
        TREES={"starter": str(tree_copy), "solution": "solution"}, CHECK_TIMEOUT=4.0
    )


def test_the_checks_page_offers_each_tree_and_says_nothing_has_run(client: FlaskClient) -> None:
    """A first visit shows the tree and store choices and an empty result area."""
    page = client.get("/checks").text
    assert "<html" in page and 'value="starter"' in page and 'value="solution"' in page
    assert "No results yet" in page
    assert "set DATABASE_URL" in page  # postgres is offered only when configured


def test_the_results_fragment_comes_alone_for_htmx(client: FlaskClient) -> None:
    """An htmx request gets the results section without the layout around it."""
    fragment = client.get("/checks?tree=solution", headers=HTMX).text
    assert fragment.lstrip().startswith('<section id="check-results"')
    assert "<html" not in fragment


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_running_the_checks_shows_the_promised_failures(client: FlaskClient, tree: str) -> None:
    """The starter shows checks 3, 4 and 5 failed; the solution shows all six passed."""
    fragment = run_checks(client, tree, **HTMX)
    statuses = check_statuses(fragment)
    assert failing_checks(fragment) == PROMISED_FAILURES[tree]
    assert len([k for k in statuses if k.isdigit()]) == len(CHECKS)
    assert {c.key for c in EXTRA_CHECKS} <= set(statuses)
    passed = len(CHECKS) - len(PROMISED_FAILURES[tree])
    assert f"{passed} passed, {len(CHECKS) - passed} failed" in fragment


def test_a_failed_row_says_what_went_wrong_and_where_to_edit(client: FlaskClient) -> None:
    """Check 4 on the starter shows expected/got and the file:line of its TODO."""
    page = run_checks(client, "starter")
    row = re.search(r'data-check="4".*?</details>', page, re.S)
    assert row is not None
    todo_line = next(
        number
        for number, line in enumerate(
            (REPO_ROOT / "starter/shared/states.py").read_text().splitlines(), start=1
        )
        if "TODO(check 4)" in line
    )
    assert f"starter/shared/states.py:{todo_line}" in row.group(0)
    assert "expected:" in row.group(0) and "✗ FAIL" in row.group(0)


def test_each_row_draws_its_trace_as_a_sequence_diagram(client: FlaskClient) -> None:
    """The solution's check 3 diagram marks the replay; check 4 marks the refusal."""
    rows = diagrams(client, run_checks(client, "solution"))
    for row in rows.values():
        assert all(f">{lane}</text>" in row for lane in ("client", "gateway", "store", "worker"))
    assert '<g class="arrow replay">' in rows["3"] and "↺ REPLAY" in rows["3"]
    assert '<g class="arrow refused">' in rows["4"] and "✗ REFUSED" in rows["4"]
    assert '<g class="arrow refused">' not in rows["2"]  # a plain round trip refuses nothing


def test_postgres_without_a_database_is_a_visible_error(client: FlaskClient) -> None:
    """Asking for the postgres store with no DATABASE_URL says so, with a 400 and no run."""
    answer = client.post("/checks/run", data={"tree": "starter", "store": "postgres"}, headers=HTMX)
    assert answer.status_code == 400
    assert "DATABASE_URL" in form_error(answer.text)
    assert not check_statuses(answer.text)


@pytest.mark.parametrize("tree", ["", "teacher", "../solution"])
def test_an_unknown_tree_is_a_visible_error(client: FlaskClient, tree: str) -> None:
    """A tree that is not offered is refused with a message naming the choices."""
    answer = client.post("/checks/run", data={"tree": tree, "store": "memory"})
    assert answer.status_code == 400
    assert "starter, solution" in form_error(answer.text)


def test_an_infinite_loop_becomes_a_failed_row_not_a_hung_dashboard(
    impatient_app: Flask, tree_copy: Path
) -> None:
    """A learner's endless loop in the key function times out into failed rows."""
    keys = tree_copy / "shared" / "keys.py"
    shipped = keys.read_text()
    looping = shipped.replace(
        "    # TODO(check 3):", "    while True:\n        pass\n    # TODO(check 3):"
    )
    assert looping != shipped, "the TODO(check 3) marker moved: update this test"
    keys.write_text(looping)
    page = run_checks(impatient_app.test_client(), "starter")
    assert "timed out after 4 s" in page
    assert failing_checks(page) == {"1", "2", "3", "4", "5", "6"}


@pytest.fixture
def stuck_app(tree_copy: Path) -> Iterator[Flask]:
    """A dashboard whose starter is a private copy, each check stopped after 2 s."""
    yield from make_app(
        TREES={"starter": str(tree_copy), "solution": "solution"}, CHECK_EACH_TIMEOUT=2.0
    )


def key_line(tree_copy: Path, replacement: str) -> int:
    """Replace the copy's key line (the TODO(check 3) body); return the first line replaced."""
    keys = tree_copy / "shared" / "keys.py"
    shipped = keys.read_text()
    line = '    material = f"{session_id}\\x1f{time.time_ns()}"\n'
    assert line in shipped, "the starter's key line moved: update this test"
    keys.write_text(shipped.replace(line, replacement))
    return shipped[: shipped.index(line)].count("\n") + 1


def test_timed_out_rows_point_at_the_line_the_tree_was_stuck_on(
    stuck_app: Flask, tree_copy: Path
) -> None:
    """An endless loop in keys.py: the rows that time out hint at the loop, not routes.py:1."""
    line = key_line(tree_copy, "    while True:\n        pass\n    material = ''\n")
    page = run_checks(stuck_app.test_client(), "starter")
    rows = re.findall(r'<details [^>]*data-check="([\w-]+)"(.*?)</details>', page, re.S)
    hints = {key: "".join(re.findall(r'<code class="hint"[^>]*>([^<]*)', row)) for key, row in rows}
    for check in ("1", "3", "6"):
        # The loop's two lines: the host was stopped on one of them.
        assert re.search(rf"learner/shared/keys.py:({line}|{line + 1}) ", hints[check]), hints
        assert "idempotency_key_for" in hints[check]
    assert "routes.py:1" not in page and "queries.py:1" not in page
    # Its diagram ends with the call that hung, and an arrow back saying it never answered.
    steps = re.findall(
        r'<tr class="step-(\w+)".*?<td class="said"[^>]*>(.*?)</td></tr>',
        diagrams(stuck_app.test_client(), page)["1"],
        re.S,
    )
    (call_kind, call), (stop_kind, stop) = steps[-2:]
    assert call_kind == "call" and call.startswith("POST /chat")
    assert stop_kind == "error" and stop == "&gt; 2 s", steps[-2:]


def test_a_syntax_error_row_names_the_file_with_the_trees_path(
    learner_app: Flask, tree_copy: Path
) -> None:
    """A tree that does not import: the row names the file and line, with the tree's folder."""
    line = key_line(tree_copy, "    material = (\n")
    page = run_checks(learner_app.test_client(), "starter")
    assert f"{tree_copy}/shared/keys.py:{line})" in page
    assert failing_checks(page) == {"1", "2", "3", "4", "5", "6"}


def test_a_syntax_error_fails_all_six_with_its_text(learner_app: Flask, tree_copy: Path) -> None:
    """A tree that does not import shows six failed rows quoting the SyntaxError."""
    states = tree_copy / "shared" / "states.py"
    states.write_text(states.read_text() + "\ndef broken(:\n")
    page = run_checks(learner_app.test_client(), "starter")
    assert "SyntaxError" in page
    assert failing_checks(page) == {"1", "2", "3", "4", "5", "6"}


def test_an_edit_shows_on_the_next_run_without_a_restart(
    learner_app: Flask, tree_copy: Path
) -> None:
    """Fixing a TODO in the tree turns its check green on the very next run."""
    client = learner_app.test_client()
    assert "4" in failing_checks(run_checks(client, "starter"))
    shutil.copy(REPO_ROOT / "solution/shared/states.py", tree_copy / "shared/states.py")
    assert "4" not in failing_checks(run_checks(client, "starter"))


def run_button(answer: str) -> str:
    """The Run button as an answer sends it (out of band in fragments)."""
    found = re.search(r'<button type="submit" id="run-checks"[^>]*>', answer)
    assert found, "the answer has no Run button"
    return found.group()


def test_run_is_disabled_while_the_checks_go_on_and_its_refusal_goes_when_they_end(
    client: FlaskClient,
) -> None:
    """Pressed, Run comes back disabled; a second press is a 409 in the notice; the poll that
    says the run ended brings Run back enabled and empties the notice."""
    form = {"tree": "starter", "store": "memory"}
    started = client.post("/checks/run", data=form, headers=HTMX).text
    assert " disabled" in run_button(started) and 'hx-swap-oob="true"' in run_button(started)
    refused = client.post("/checks/run", data=form, headers=HTMX)
    assert refused.status_code == 409
    assert re.search(r'<div id="check-notice"><p class="notice error"', refused.text)
    poll = re.search(r'hx-get="(/checks/status[^"]+)"', started)
    last = started
    deadline = time.monotonic() + 120
    while poll and time.monotonic() < deadline:
        answer = client.get(html.unescape(poll.group(1)), headers=HTMX)
        if answer.status_code == 200:
            last = answer.text
            poll = re.search(r'hx-get="(/checks/status[^"]+)"', last)
        time.sleep(0.05)
    assert 'data-running="no"' in last, "the run did not end in time"
    assert " disabled" not in run_button(last)
    assert '<div id="check-notice" hx-swap-oob="true"></div>' in last
    assert " disabled" not in run_button(client.get("/checks?tree=starter&store=memory").text)
