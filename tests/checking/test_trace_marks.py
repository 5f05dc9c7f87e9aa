"""A failing check's trace shows the failure: the answer that let the lesson's rule be broken."""

from __future__ import annotations

import pytest

from labs.checking.marks import FORBIDDEN, NEW_KEY, NOTES, SECOND_RUN, SECOND_SEQ
from labs.checking.result import CheckResult
from labs.checking.runner import run_checks
from labs.checking.trace import events_from


@pytest.fixture(scope="module")
def traces() -> dict[str, dict[str, CheckResult]]:
    """Checks 3, 4 and 5 on the starter and on the solution, by tree and check."""
    return {
        tree: {r.key: r for r in run_checks(tree, only={"3", "4", "5"}, seed=7).results}
        for tree in ("starter", "solution")
    }


def marked(result: CheckResult) -> list[tuple[str, str]]:
    """The label and note of each answer marked as having let something through."""
    return [(e.label, e.note) for e in result.events if e.kind == "through"]


def test_check_3_shows_the_key_calls_and_the_repeat_that_made_a_second_run(
    traces: dict[str, dict[str, CheckResult]],
) -> None:
    """On the starter the same arguments give another key, and the repeated /chat a new run."""
    result = traces["starter"]["3"]
    assert not result.passed
    calls = [e.label for e in result.events if e.kind == "call"]
    assert sum(label.startswith("idempotency_key_for(") for label in calls) == 9
    assert sum(label.startswith("POST /chat") for label in calls) == 2
    notes = [note for _label, note in marked(result)]
    assert notes.count(NEW_KEY) >= 1 and notes.count(SECOND_RUN) == 1
    second_run = next(label for label, note in marked(result) if note == SECOND_RUN)
    assert second_run.startswith("202")


def test_check_4_shows_the_forbidden_move_that_went_through(
    traces: dict[str, dict[str, CheckResult]],
) -> None:
    """On the starter the walk's done -> running is drawn, and marked as forbidden."""
    result = traces["starter"]["4"]
    moves = [e.label for e in result.events if e.label.startswith("transition(")]
    assert any(", done, running)" in label for label in moves)
    assert [note for _label, note in marked(result)] == [FORBIDDEN]
    assert "status=running" in marked(result)[0][0]


def test_check_5_marks_the_duplicate_seq_that_was_stored(
    traces: dict[str, dict[str, CheckResult]],
) -> None:
    """On the starter each second message at a seq is marked; the first ones are not."""
    notes = [note for _label, note in marked(traces["starter"]["5"])]
    assert notes and set(notes) == {SECOND_SEQ}


@pytest.mark.parametrize("check", ["3", "4", "5"])
def test_the_solution_lets_nothing_through(
    traces: dict[str, dict[str, CheckResult]], check: str
) -> None:
    """The solution's traces mark no answer; its refusals and replays are drawn as before."""
    result = traces["solution"][check]
    assert result.passed and marked(result) == []
    assert {e.kind for e in result.events} & {"refused", "replay"}


def test_a_host_cannot_slip_its_own_words_in_as_a_note() -> None:
    """A note that is not one of the kit's is dropped; a known one is kept, as are 4-item events."""
    events = events_from(
        [
            ["store", "worker", "x", "through", "you passed, really"],
            ["store", "worker", "y", "through", NOTES[0]],
            ["client", "gateway", "z", "call"],
        ]
    )
    assert [e.note for e in events] == ["", NOTES[0], ""]
