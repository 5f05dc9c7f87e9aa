"""The run state machine: every (from, to) pair, checked against the day-8 table."""

from __future__ import annotations

import itertools

import pytest

from solution.shared.errors import IllegalTransitionError
from solution.shared.states import TERMINAL, RunStatus, can_transition, ensure_transition

# Written out from the lesson's table, independently of ALLOWED in the code.
EXPECTED_EDGES = {
    ("pending", "running"),
    ("pending", "cancelled"),
    ("pending", "failed"),
    ("running", "streaming"),
    ("running", "done"),
    ("running", "failed"),
    ("running", "cancelled"),
    ("streaming", "done"),
    ("streaming", "failed"),
    ("streaming", "cancelled"),
}
ALL_PAIRS = list(itertools.product(RunStatus, RunStatus))


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=lambda s: str(s))
def test_each_pair_is_allowed_exactly_when_the_table_lists_it(
    current: RunStatus, target: RunStatus
) -> None:
    """can_transition agrees with the lesson's table for every pair of statuses."""
    assert can_transition(current, target) == ((current, target) in EXPECTED_EDGES)


@pytest.mark.parametrize(("current", "target"), ALL_PAIRS, ids=lambda s: str(s))
def test_ensure_transition_refuses_every_unlisted_pair_naming_both_states(
    current: RunStatus, target: RunStatus
) -> None:
    """A refused move raises IllegalTransitionError whose message names both states."""
    if (current, target) in EXPECTED_EDGES:
        ensure_transition("run-1", current, target)
        return
    with pytest.raises(IllegalTransitionError) as caught:
        ensure_transition("run-1", current, target)
    assert (caught.value.current, caught.value.target) == (current, target)
    assert f"{current} -> {target}" in str(caught.value)


def test_terminal_states_have_no_way_out() -> None:
    """done, failed and cancelled lead nowhere, not even to themselves."""
    assert {s for s in RunStatus if not any(can_transition(s, t) for t in RunStatus)} == TERMINAL


def test_the_starter_as_shipped_lets_done_go_back_to_running() -> None:
    """The starter's naive allowlist is what check 4 exists to catch."""
    from starter.shared.states import RunStatus as StarterStatus
    from starter.shared.states import can_transition as starter_can

    assert starter_can(StarterStatus.DONE, StarterStatus.RUNNING)
