"""The runs view: the lesson's buttons go through each tree's own code and show the outcome."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from .pages import (
    HTMX,
    finish,
    form_error,
    last_outcome,
    outcome_tone,
    run_ids,
    send,
    status_of,
    wait_for,
)

TREES = ["starter", "solution"]
# What each tree does with the lesson's provocations: the starter lets them through.
LETS_IT_THROUGH = {"starter": True, "solution": False}
# A run's life, in order: the move buttons follow it.
LIFECYCLE = ["pending", "running", "streaming", "done", "failed", "cancelled"]


def move_buttons(page: str, run_id: str) -> list[str]:
    """The targets of a run's move buttons, in the order the row shows them."""
    row = re.search(rf'<tr data-run="{run_id}".*?</tr>', page, re.S)
    assert row is not None, f"run {run_id} is not in the table"
    return re.findall(r'class="move" data-target="(\w+)"', row.group(0))


@pytest.mark.parametrize("tree", TREES)
def test_the_runs_page_and_its_live_fragment_render(client: FlaskClient, tree: str) -> None:
    """The page has the controls and the graph; the fragment is the live section alone."""
    page = client.get(f"/runs/{tree}").text
    assert "<html" in page and "preview of day 9" in page and 'data-state="pending"' in page
    fragment = client.get(f"/runs/{tree}", headers=HTMX).text
    assert '<section id="runs-live"' in fragment and "<html" not in fragment


def test_runs_without_a_tree_start_on_the_starter(client: FlaskClient) -> None:
    """/runs sends the learner to the starter's bench."""
    assert client.get("/runs").headers["Location"].endswith("/runs/starter")


@pytest.mark.parametrize("tree", TREES)
def test_sending_the_same_message_again(client: FlaskClient, tree: str) -> None:
    """The solution answers a retry with the same run id; the starter makes a second run."""
    run_id, _ = send(client, tree)
    page = client.post(f"/runs/{tree}/{run_id}/again", headers=HTMX).text
    assert len(run_ids(page)) == (2 if LETS_IT_THROUGH[tree] else 1)
    assert ("NEW run" if LETS_IT_THROUGH[tree] else f"same run id {run_id}") in last_outcome(page)


@pytest.mark.parametrize("tree", TREES)
def test_concurrent_duplicates(client: FlaskClient, tree: str) -> None:
    """Eight identical requests at once: one run on the solution, eight on the starter."""
    page = client.post(
        f"/runs/{tree}/burst", data={"message": "hi", "copies": "8"}, headers=HTMX
    ).text
    assert len(run_ids(page)) == (8 if LETS_IT_THROUGH[tree] else 1)


@pytest.mark.parametrize("tree", TREES)
def test_forcing_done_back_to_running(client: FlaskClient, tree: str) -> None:
    """The starter lets done -> running through (shown as illegal); the solution refuses it."""
    run_id, _ = send(client, tree)
    assert status_of(finish(client, tree, run_id), run_id) == "done"
    page = client.post(f"/runs/{tree}/{run_id}/force", headers=HTMX).text
    if LETS_IT_THROUGH[tree]:
        assert status_of(page, run_id) == "running"
        said = last_outcome(page)
        assert "WENT THROUGH" in said and "allowlist forbids" in said
        assert said.lower().count("went through") == 1  # the badge says it; the reason, why
        assert 'data-edge="done-running"' in page and "forbidden, went through ×1" in page
    else:
        assert status_of(page, run_id) == "done"
        assert "REFUSED" in last_outcome(page) and "IllegalTransitionError" in last_outcome(page)
        assert 'data-edge="done-running"' in page and "✗ refused ×1" in page


@pytest.mark.parametrize("tree", TREES)
def test_appending_a_duplicate_seq(client: FlaskClient, tree: str) -> None:
    """The starter stores a second seq 0; the solution refuses it, leaving one message."""
    run_id, _ = send(client, tree)
    page = client.post(f"/runs/{tree}/{run_id}/duplicate-seq", headers=HTMX).text
    messages = re.search(rf'data-run="{run_id}".*?<td data-label="messages">(\d+)</td>', page, re.S)
    assert messages is not None
    assert int(messages.group(1)) == (2 if LETS_IT_THROUGH[tree] else 1)
    assert ("STORED TWICE" if LETS_IT_THROUGH[tree] else "REFUSED") in last_outcome(page)


def test_moves_are_counted_on_the_graph_edges(client: FlaskClient) -> None:
    """Two runs finished by hand show ×2 on pending -> running and on running -> done."""
    for client_id in ("a", "b"):
        run_id, _ = send(client, "solution", client_id=client_id)
        page = finish(client, "solution", run_id)
    for edge in ("pending-running", "running-done"):
        drawn = re.search(rf'data-edge="{edge}">.*?</g>', page, re.S)
        assert drawn is not None and "×2" in drawn.group(0)
    assert re.search(r'data-state="done">.*?2 runs', page, re.S)


@pytest.mark.parametrize(
    ("field", "value", "complaint"),
    [
        ("copies", "abc", "whole number"),
        ("copies", "1", "between 2 and 32"),
        ("copies", "99", "between 2 and 32"),
        ("message", "", "message is required"),
    ],
)
def test_bad_burst_input_is_a_visible_error(
    client: FlaskClient, field: str, value: str, complaint: str
) -> None:
    """A wrong field is named in a 400 the page shows, and nothing is sent."""
    data = {"message": "hi", "copies": "4", field: value}
    answer = client.post("/runs/solution/burst", data=data, headers=HTMX)
    assert answer.status_code == 400
    assert complaint in form_error(answer.text)
    assert run_ids(answer.text) == []


def test_a_move_the_state_does_not_offer_is_refused_with_the_choices(client: FlaskClient) -> None:
    """pending -> done is not a button; posting it anyway names the allowed moves."""
    run_id, _ = send(client, "solution")
    answer = client.post(f"/runs/solution/{run_id}/advance", data={"target": "done"}, headers=HTMX)
    assert answer.status_code == 400
    assert "running, failed, cancelled" in form_error(answer.text)
    assert status_of(answer.text, run_id) == "pending"


@pytest.mark.parametrize("url", ["/runs/nowhere", "/runs/solution/NOSUCHRUN"])
def test_unknown_trees_and_runs_are_404_with_a_reason(client: FlaskClient, url: str) -> None:
    """A wrong address names what does not exist."""
    answer = client.get(url)
    assert answer.status_code == 404 and "no " in form_error(answer.text)


def test_buttons_on_an_unknown_run_are_a_visible_error(client: FlaskClient) -> None:
    """Pressing a run's button for a run this bench never sent is a 400 naming it."""
    answer = client.post("/runs/solution/NOSUCHRUN/force", headers=HTMX)
    assert answer.status_code == 400 and "NOSUCHRUN" in form_error(answer.text)


@pytest.mark.parametrize("tree", TREES)
def test_the_demo_executor_plays_a_run_to_done_in_seq_order(client: FlaskClient, tree: str) -> None:
    """With the executor on, a new run reaches done with messages seq 0..n and polling stops."""
    client.post(f"/runs/{tree}/demo", data={"switch": "on", "pace": "fast"}, headers=HTMX)
    run_id, page = send(client, tree, client_id="demo")
    assert 'hx-trigger="every' in page  # something is about to move: the table polls
    detail = wait_for(client, f"/runs/{tree}/{run_id}", r'data-status="done"')
    seqs = [int(s) for s in re.findall(r'data-seq="(\d+)" data-kind="message"', detail)]
    assert seqs == list(range(len(seqs))) and len(seqs) > 2
    live = wait_for(client, f"/runs/{tree}", r'data-moving="no"')
    assert 'hx-trigger="every' not in live


def test_a_run_sent_to_fail_ends_failed(client: FlaskClient) -> None:
    """The "make it fail" box makes the demo executor end the run in failed."""
    client.post("/runs/solution/demo", data={"switch": "on", "pace": "fast"}, headers=HTMX)
    run_id, _ = send(client, "solution", client_id="doomed", fail="on")
    detail = wait_for(client, f"/runs/solution/{run_id}", r'data-status="(failed|done)"')
    assert 'data-status="failed"' in detail


def test_nothing_polls_while_the_executor_is_off(client: FlaskClient) -> None:
    """A pending run with the executor off does not move, so the page does not poll."""
    send(client, "solution")
    page = client.get("/runs/solution", headers=HTMX).text
    assert 'data-moving="no"' in page and 'hx-trigger="every' not in page


@pytest.mark.parametrize("tree", TREES)
def test_a_second_send_with_the_same_client_id(client: FlaskClient, tree: str) -> None:
    """The form's retry: the solution's replay is a blue ↺; the starter's new run is flagged ⚠."""
    first, _ = send(client, tree, client_id="again-1")
    page = client.post(
        f"/runs/{tree}/send",
        headers=HTMX,
        data={"message": "book me a flight", "client_message_id": "again-1"},
    ).text
    said = last_outcome(page)
    assert "run run" not in said
    if LETS_IT_THROUGH[tree]:
        second = run_ids(page)[0]
        assert second != first and outcome_tone(page) == "warn"
        assert said.startswith(f"⚠ 202: a NEW run {second}") and f"already made run {first}" in said
    else:
        assert run_ids(page) == [first] and outcome_tone(page) == "replay"
        assert said == f"↺ 202: the existing run {first} came back (nothing inserted)"


def test_a_fresh_client_id_is_a_plain_created_run(client: FlaskClient) -> None:
    """Two sends with different clientMessageIds are two green creations, not a warning."""
    send(client, "starter", client_id="one")
    run_id, page = send(client, "starter", client_id="two")
    assert outcome_tone(page) == "ok" and last_outcome(page) == f"✓ 202: created run {run_id}"


def test_a_new_error_clears_the_last_outcome(client: FlaskClient) -> None:
    """After a send, a refused form shows its error alone, and the old banner stays gone."""
    _, page = send(client, "solution")
    assert 'id="last-outcome"' in page
    answer = client.post("/runs/solution/burst", data={"message": "", "copies": "4"}, headers=HTMX)
    assert answer.status_code == 400 and "message is required" in form_error(answer.text)
    assert 'id="last-outcome"' not in answer.text
    assert 'id="last-outcome"' not in client.get("/runs/solution", headers=HTMX).text


@pytest.mark.parametrize("tree", TREES)
def test_move_buttons_follow_the_lifecycle(client: FlaskClient, tree: str) -> None:
    """In every state a run passes through, its move buttons come in lifecycle order."""
    run_id, page = send(client, tree)
    for target in ("running", "streaming", "done"):
        shown = move_buttons(page, run_id)
        assert shown and shown == sorted(shown, key=LIFECYCLE.index)
        page = client.post(
            f"/runs/{tree}/{run_id}/advance", data={"target": target}, headers=HTMX
        ).text
    assert move_buttons(page, run_id) == []
    pending, page = send(client, tree, client_id="next")
    assert move_buttons(page, pending)[0] == "running"  # the usual next step comes first


def test_a_table_longer_than_one_batch_of_the_host_is_read_whole_and_paged(
    client: FlaskClient,
) -> None:
    """160 runs (the starter makes one per duplicate) are read in batches: the graph counts them
    all, the table shows the newest 50 with a link to the older ones, the last page the rest."""
    for _burst in range(5):
        answer = client.post(
            "/runs/starter/burst", data={"message": "hi", "copies": "32"}, headers=HTMX
        )
        assert answer.status_code == 200, answer.text
    page = client.get("/runs/starter", headers=HTMX)
    assert page.status_code == 200 and len(run_ids(page.text)) == 50
    assert "page 1 of 4, 160 runs" in page.text and 'id="older-runs"' in page.text
    counted = re.findall(
        r'<tr data-state="\w+"><td data-label="\w+">\w+</td><td [^>]*>(\d+)</td>', page.text
    )
    assert sum(int(count) for count in counted) == 160
    last = client.get("/runs/starter?page=4", headers=HTMX).text
    assert len(run_ids(last)) == 10 and not set(run_ids(last)) & set(run_ids(page.text))
    assert 'id="older-runs"' not in last and 'rel="prev"' in last


def journal_creations(page: str) -> list[tuple[str, str, str]]:
    """Each POST /chat in the attempts timeline: its outcome, its run's tail, and the tail of
    the first run it links to ('' when none)."""
    rows = re.findall(r'<tr class="outcome-(\w+)".*?</tr>', page, re.S)
    found = []
    for row in re.findall(r'<tr class="outcome-\w+".*?</tr>', page, re.S):
        if "POST /chat" not in row:
            continue
        outcome = re.search(r'data-outcome="(\w+)"', row)
        tail = re.search(r"<code>…(\w+)</code>", row)
        first = re.search(r'class="first-run">.*?<code>…(\w+)</code>', row, re.S)
        assert outcome and tail
        found.append((outcome.group(1), tail.group(1), first.group(1) if first else ""))
    assert rows
    return found


@pytest.mark.parametrize("tree", TREES)
def test_a_run_made_again_is_marked_a_duplicate_wherever_it_shows(
    client: FlaskClient, tree: str
) -> None:
    """On the starter the second run of one request is ⚠ in the attempts, in its row and on
    its page, each linked to the first run; the solution's replay is no duplicate anywhere."""
    first, _ = send(client, tree, client_id="twice")
    page = client.post(f"/runs/{tree}/{first}/again", headers=HTMX).text
    created = journal_creations(page)
    if not LETS_IT_THROUGH[tree]:
        assert [outcome for outcome, _tail, _first in created] == ["replayed", "accepted"]
        assert "duplicate-of" not in page and "first-run" not in page
        assert 'id="run-duplicate"' not in client.get(f"/runs/{tree}/{first}").text
        return
    second = run_ids(page)[0]
    assert created == [("duplicate", second[-6:], first[-6:]), ("accepted", first[-6:], "")]
    row = re.search(rf'<tr data-run="{second}".*?</tr>', page, re.S)
    assert row and f'href="/runs/{tree}/{first}"' in row.group(0) and "⚠" in row.group(0)
    first_row = re.search(rf'<tr data-run="{first}".*?</tr>', page, re.S)
    assert first_row and "duplicate-of" not in first_row.group(0)
    detail = client.get(f"/runs/{tree}/{second}").text
    notice = re.search(r'id="run-duplicate">(.*?)</p>', detail, re.S)
    assert notice and f'href="/runs/{tree}/{first}"' in notice.group(1)
    detail_created = journal_creations(detail)
    assert detail_created == [("duplicate", second[-6:], first[-6:])]


def test_every_copy_of_a_burst_after_the_first_links_to_the_first(client: FlaskClient) -> None:
    """Eight copies that made eight runs on the starter: seven duplicates of one first run."""
    page = client.post(
        "/runs/starter/burst", data={"message": "hi", "copies": "8"}, headers=HTMX
    ).text
    created = journal_creations(page)
    firsts = {first for outcome, _tail, first in created if outcome == "duplicate"}
    plain = [tail for outcome, tail, _first in created if outcome == "accepted"]
    assert len(created) == 8 and len(plain) == 1 and firsts == set(plain)
