"""A failing check is drawn with its failure, and every picture has its words in a table."""

from __future__ import annotations

import html
import re

import pytest
from flask.testing import FlaskClient

from .pages import HTMX, diagrams, finish, finished_checks, send


@pytest.fixture
def starter_diagrams(client: FlaskClient) -> dict[str, str]:
    """The starter's diagrams, each fetched as an opened row fetches it."""
    client.post("/checks/run", data={"tree": "starter", "store": "memory"}, headers=HTMX)
    return diagrams(client, finished_checks(client, "starter"))


def marked(diagram: str) -> list[str]:
    """The words of each arrow drawn as having let something through."""
    arrows = re.findall(r'<g class="arrow through">(.*?)</g>', diagram, re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", a)).split()) for a in arrows]


def steps(diagram: str) -> list[tuple[str, str]]:
    """The table of steps: each row's kind and its words."""
    rows = re.findall(r'<tr class="step-\w+" data-kind="(\w+)">(.*?)</tr>', diagram, re.S)
    return [(kind, " ".join(html.unescape(re.sub(r"<[^>]+>", " ", r)).split())) for kind, r in rows]


def test_check_3_draws_the_key_calls_and_the_repeat_that_made_a_new_run(
    starter_diagrams: dict[str, str],
) -> None:
    """The key that changed and the second run are marked, in the picture and in the table."""
    diagram = starter_diagrams["3"]
    assert diagram.count("idempotency_key_for(") >= 6 * 2  # each call, in the picture and table
    assert any("⚠ NEW KEY" in words for words in marked(diagram))
    second = [words for words in marked(diagram) if "⚠ NEW RUN" in words]
    assert len(second) == 1 and "a second run for a request already sent" in second[0]
    table = steps(diagram)
    assert [kind for kind, _words in table].count("through") == len(marked(diagram))
    assert sum(words.count("POST /chat") for _kind, words in table) == 2


def test_check_4_draws_the_forbidden_move_that_went_through(
    starter_diagrams: dict[str, str],
) -> None:
    """done -> running is drawn, marked WENT THROUGH, with why."""
    (words,) = marked(starter_diagrams["4"])
    assert "⚠ WENT THROUGH" in words and "allowlist forbids" in words
    assert any("done, running)" in row for _kind, row in steps(starter_diagrams["4"]))


def test_check_5_marks_the_duplicate_seq_that_was_stored(
    starter_diagrams: dict[str, str],
) -> None:
    """Each second message stored at a seq is marked; the first one at that seq is not."""
    found = marked(starter_diagrams["5"])
    assert found and all("a second message stored at this seq" in words for words in found)
    assert all(re.search(r"seq=\d+", words) for words in found)


def test_the_solutions_diagrams_mark_replays_and_refusals_in_words(client: FlaskClient) -> None:
    """The solution lets nothing through; its table says REPLAY and REFUSED, and why."""
    client.post("/checks/run", data={"tree": "solution", "store": "memory"}, headers=HTMX)
    drawn = diagrams(client, finished_checks(client, "solution"))
    assert all(marked(diagram) == [] for diagram in drawn.values())
    assert any(kind == "replay" and "↺ REPLAY" in words for kind, words in steps(drawn["3"]))
    refused = [words for kind, words in steps(drawn["4"]) if kind == "refused"]
    assert refused and all("✗ REFUSED" in words for words in refused)
    assert any("IllegalTransitionError" in words for words in refused)


def test_the_state_graph_has_its_edges_and_counts_in_a_table(client: FlaskClient) -> None:
    """After a finished run and a refused done -> running, the table says so in numbers."""
    run_id, _ = send(client, "solution")
    finish(client, "solution", run_id)
    page = client.post(f"/runs/solution/{run_id}/force", headers=HTMX).text
    cell = r'<td data-label="[^"]*">[^<]*</td>'
    edges = dict(re.findall(rf'<tr data-edge="([\w-]+)">{cell}((?:{cell}){{4}})</tr>', page))
    cells = {
        edge: re.findall(r'<td data-label="[^"]*">([^<]*)</td>', row) for edge, row in edges.items()
    }
    assert cells["pending-running"] == ["yes", "1", "0", "0"]
    assert cells["done-running"] == ["no", "0", "1", "0"]
    states = dict(
        re.findall(
            r'<tr data-state="(\w+)"><td data-label="\w+">\w+</td><td [^>]*>(\d+)</td>', page
        )
    )
    assert states["done"] == "1"
