"""The lesson's state machine, defined once: its paths follow its own moves, and the dashboard
and the checks read it from there."""

from __future__ import annotations

import pytest

from labs.lesson.states import LESSON_MOVES, PATHS, STATUSES, next_states, terminal


def test_every_status_has_its_moves_and_a_path() -> None:
    """The allowlist, the paths and the lifecycle order name the same six statuses."""
    assert set(LESSON_MOVES) == set(PATHS) == set(STATUSES) and len(STATUSES) == 6
    assert all(targets <= set(STATUSES) for targets in LESSON_MOVES.values())


@pytest.mark.parametrize("status", STATUSES)
def test_each_path_starts_pending_and_takes_only_allowed_moves_to_its_status(status: str) -> None:
    """Check 4 walks a new run to each status by these steps: each step is one the lesson allows."""
    at = "pending"
    for source, target in PATHS[status]:
        assert source == at and target in LESSON_MOVES[source], (status, source, target)
        at = target
    assert at == status


@pytest.mark.parametrize("status", STATUSES)
def test_next_states_are_the_allowed_moves_in_lifecycle_order(status: str) -> None:
    """The dashboard's buttons: exactly the allowed moves, in the order of a run's life."""
    offered = next_states(status)
    assert set(offered) == LESSON_MOVES[status]
    assert offered == sorted(offered, key=STATUSES.index)
    assert terminal(status) == (offered == [])


def test_an_unknown_status_leads_nowhere() -> None:
    """A status a tree made up has no moves, rather than a KeyError on the page."""
    assert next_states("paused") == [] and terminal("paused")


def test_the_dashboard_offers_the_lessons_moves() -> None:
    """web/workbench/moves.py reads the lesson's allowlist rather than keeping a copy of its own."""
    from web.workbench.moves import LESSON_ALLOWED, STATES

    assert list(STATUSES) == STATES
    assert {status: next_states(status) for status in STATUSES} == LESSON_ALLOWED
