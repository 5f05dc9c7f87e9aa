"""A run's page: its timeline of attempts and its messages as a strip ordered by seq."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from flask.testing import FlaskClient

from web.i18n import Verbatim
from web.rendering.strip import message_strip
from web.workbench.journal import Action, AttemptOutcome, Entry

from .pages import HTMX, send


@pytest.mark.parametrize(
    ("tree", "shown"), [("starter", "DUPLICATE seq"), ("solution", "REFUSED attempt")]
)
def test_a_duplicate_seq_is_marked_in_the_strip(client: FlaskClient, tree: str, shown: str) -> None:
    """The second seq 0 shows as stored twice (starter) or as a refused attempt (solution)."""
    run_id, _ = send(client, tree)
    client.post(f"/runs/{tree}/{run_id}/duplicate-seq", headers=HTMX)
    page = client.get(f"/runs/{tree}/{run_id}").text
    assert "<html" in page and shown in page
    assert page.count('data-seq="0"') == 2


def test_the_timeline_lists_accepted_and_refused_moves_by_whom(client: FlaskClient) -> None:
    """After a manual finish and a forced move, the timeline shows both, by the dashboard."""
    run_id, _ = send(client, "solution")
    for target in ("running", "done"):
        client.post(f"/runs/solution/{run_id}/advance", data={"target": target}, headers=HTMX)
    client.post(f"/runs/solution/{run_id}/force", headers=HTMX)
    fragment = client.get(f"/runs/solution/{run_id}", headers=HTMX).text
    assert "<html" not in fragment and '<section id="run-body"' in fragment
    assert fragment.count('data-outcome="accepted"') == 3  # created, running, done
    assert fragment.count('data-outcome="refused"') == 1
    assert "dashboard" in fragment and "done → running" in fragment


def test_a_missing_seq_is_shown_as_a_gap() -> None:
    """Messages at seq 0 and 2 leave a gap cell at seq 1."""
    messages = [SimpleNamespace(seq=seq, role="assistant", content=str(seq)) for seq in (2, 0)]
    refused = Entry("r", "worker", Action.MESSAGE, AttemptOutcome.REFUSED, Verbatim("taken"), seq=0)
    cells = message_strip(messages, [refused])
    assert [(c.seq, c.kind) for c in cells] == [
        (0, "message"),
        (0, "refused"),
        (1, "gap"),
        (2, "message"),
    ]
