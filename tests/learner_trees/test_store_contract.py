"""One Store contract, two stores: MemoryStore (MOCK=1) and SqlStore on real Postgres.

Every behaviour MOCK.md claims the two share is proven here, by the same
test run against each (the solution tree, whose schema has both keys).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from solution.infra.memory import MemoryStore
from solution.infra.sql import SqlStore
from solution.shared.errors import (
    DuplicateMessageError,
    IllegalTransitionError,
    RunNotFoundError,
    SessionNotFoundError,
    TransitionConflictError,
)
from solution.shared.states import RunStatus

T = TypeVar("T")
THREADS = 16


@pytest.fixture(params=["memory", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest) -> Iterator[Any]:
    """An empty store of each kind."""
    if request.param == "memory":
        yield MemoryStore()
        return
    sql = SqlStore(request.getfixturevalue("solution_database"), schema="solution")
    yield sql
    sql.close()


def all_at_once(count: int, action: Callable[[int], T]) -> list[T]:
    """Run action(i) on count threads released together by a barrier."""
    start = threading.Barrier(count)

    def released(i: int) -> T:
        start.wait()
        return action(i)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(released, range(count)))


def test_a_session_reads_back_as_written(store: Any) -> None:
    """A created session comes back with the same id, user and title."""
    created = store.create_session("ada", "flights")
    found = store.get_session(created.id)
    assert (found.id, found.user_id, found.title) == (created.id, "ada", "flights")


def test_an_unknown_session_is_not_found(store: Any) -> None:
    """Reading a session nobody created raises SessionNotFoundError."""
    with pytest.raises(SessionNotFoundError):
        store.get_session("no-such-session")


def test_a_run_needs_an_existing_session(store: Any) -> None:
    """The foreign key refuses a run for a missing session, and nothing is stored."""
    with pytest.raises(SessionNotFoundError):
        store.create_run("no-such-session", "hello", "key-orphan")
    assert store.count_runs_with_key("key-orphan") == 0


def test_a_message_needs_an_existing_session_and_run(store: Any) -> None:
    """The foreign keys refuse a message for a missing session or a missing run."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hello", "key-fk").run
    with pytest.raises(SessionNotFoundError):
        store.append_message("no-such-session", run.id, "user", "hi", 0)
    with pytest.raises(RunNotFoundError):
        store.append_message(session.id, "no-such-run", "user", "hi", 0)
    assert store.messages_for_run(run.id) == []


def test_an_unknown_run_is_not_found(store: Any) -> None:
    """Reading a run nobody created raises RunNotFoundError."""
    with pytest.raises(RunNotFoundError):
        store.get_run("no-such-run")


def test_a_new_run_is_pending_and_reads_back(store: Any) -> None:
    """create_run inserts a pending run that get_run returns."""
    session = store.create_session("ada", "t")
    outcome = store.create_run(session.id, "book a flight", "key-new")
    assert outcome.created
    found = store.get_run(outcome.run.id)
    assert (found.status, found.input, found.session_id) == (
        RunStatus.PENDING,
        "book a flight",
        session.id,
    )


def test_the_same_key_returns_the_same_run_and_inserts_one_row(store: Any) -> None:
    """A retry with the same key gets the first run back, created False, and one row exists."""
    session = store.create_session("ada", "t")
    first = store.create_run(session.id, "book a flight", "key-retry")
    again = store.create_run(session.id, "book a flight", "key-retry")
    assert (again.run.id, again.created) == (first.run.id, False)
    assert store.count_runs_with_key("key-retry") == 1


def test_concurrent_creates_with_one_key_leave_one_row(store: Any) -> None:
    """16 threads creating the same key at once all get one run, and only one inserted it."""
    session = store.create_session("ada", "t")
    outcomes = all_at_once(THREADS, lambda _: store.create_run(session.id, "hi", "key-burst"))
    assert len({o.run.id for o in outcomes}) == 1
    assert sum(o.created for o in outcomes) == 1
    assert store.count_runs_with_key("key-burst") == 1


def test_allowed_transitions_move_the_run_along(store: Any) -> None:
    """pending -> running -> streaming -> done goes through, each step stored."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-path").run
    path = [RunStatus.PENDING, RunStatus.RUNNING, RunStatus.STREAMING, RunStatus.DONE]
    for current, target in itertools.pairwise(path):
        assert store.transition(run.id, current, target).status == target
        assert store.get_run(run.id).status == target


def test_an_illegal_transition_names_both_states_and_changes_nothing(store: Any) -> None:
    """done -> running raises IllegalTransitionError naming both states; the run stays done."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-illegal").run
    store.transition(run.id, RunStatus.PENDING, RunStatus.RUNNING)
    store.transition(run.id, RunStatus.RUNNING, RunStatus.DONE)
    with pytest.raises(IllegalTransitionError, match=r"done -> running"):
        store.transition(run.id, RunStatus.DONE, RunStatus.RUNNING)
    assert store.get_run(run.id).status == RunStatus.DONE


def test_a_stale_expected_status_is_a_conflict(store: Any) -> None:
    """Compare-and-set: expecting pending when the run is running raises TransitionConflictError."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-stale").run
    store.transition(run.id, RunStatus.PENDING, RunStatus.RUNNING)
    with pytest.raises(TransitionConflictError) as refused:
        store.transition(run.id, RunStatus.PENDING, RunStatus.CANCELLED)
    assert (refused.value.expected, refused.value.actual) == ("pending", "running")
    assert store.get_run(run.id).status == RunStatus.RUNNING


def test_moving_an_unknown_run_is_not_found(store: Any) -> None:
    """An allowed move of a run nobody created raises RunNotFoundError."""
    with pytest.raises(RunNotFoundError):
        store.transition("no-such-run", RunStatus.PENDING, RunStatus.RUNNING)


@pytest.mark.parametrize("attempt", range(5))
def test_concurrent_claims_let_exactly_one_worker_win(store: Any, attempt: int) -> None:
    """Eight workers claim one pending run at once: one moves it, seven get a conflict."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", f"key-claim-{attempt}").run

    def claim(_: int) -> bool:
        try:
            store.transition(run.id, RunStatus.PENDING, RunStatus.RUNNING)
        except TransitionConflictError:
            return False
        return True

    assert sum(all_at_once(8, claim)) == 1
    assert store.get_run(run.id).status == RunStatus.RUNNING


def test_a_second_message_at_the_same_seq_is_refused_and_one_row_remains(store: Any) -> None:
    """The unique (run_id, seq) turns a second seq 0 into DuplicateMessageError; one row stays."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-dup").run
    store.append_message(session.id, run.id, "assistant", "first", 0)
    with pytest.raises(DuplicateMessageError) as refused:
        store.append_message(session.id, run.id, "assistant", "again", 0)
    assert (refused.value.run_id, refused.value.seq) == (run.id, 0)
    assert [m.content for m in store.messages_for_run(run.id)] == ["first"]


def test_concurrent_writes_of_one_seq_leave_one_row(store: Any) -> None:
    """16 threads writing seq 0 of one run at once: one succeeds, the rest are duplicates."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-dup-burst").run

    def write(i: int) -> bool:
        try:
            store.append_message(session.id, run.id, "assistant", f"copy {i}", 0)
        except DuplicateMessageError:
            return False
        return True

    assert sum(all_at_once(THREADS, write)) == 1
    assert len(store.messages_for_run(run.id)) == 1


def test_messages_read_back_ordered_by_seq(store: Any) -> None:
    """Messages written as seq 2, 0, 1 read back as 0, 1, 2, for their run only."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-order").run
    other = store.create_run(session.id, "other", "key-order-other").run
    for seq in (2, 0, 1):
        store.append_message(session.id, run.id, "assistant", f"part {seq}", seq)
    store.append_message(session.id, other.id, "assistant", "elsewhere", 0)
    assert [(m.seq, m.content) for m in store.messages_for_run(run.id)] == [
        (0, "part 0"),
        (1, "part 1"),
        (2, "part 2"),
    ]


def test_messages_without_a_run_never_collide(store: Any) -> None:
    """Two session-level messages (no run) at the same seq are both kept, as NULLs never clash."""
    session = store.create_session("ada", "t")
    first = store.append_message(session.id, None, "system", "welcome", 0)
    second = store.append_message(session.id, None, "system", "welcome again", 0)
    assert first.id != second.id


def test_pending_runs_lists_oldest_first_within_the_limit(store: Any) -> None:
    """pending_runs returns pending runs only, oldest first, at most limit of them."""
    session = store.create_session("ada", "t")
    ids = [store.create_run(session.id, f"run {i}", f"key-queue-{i}").run.id for i in range(4)]
    store.transition(ids[1], RunStatus.PENDING, RunStatus.RUNNING)
    assert [r.id for r in store.pending_runs()] == [ids[0], ids[2], ids[3]]
    assert [r.id for r in store.pending_runs(2)] == [ids[0], ids[2]]


def test_pending_runs_changes_nothing(store: Any) -> None:
    """Reading the queue twice gives the same runs, still pending: the read takes nothing."""
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "key-peek").run
    first, second = store.pending_runs(), store.pending_runs()
    assert [r.id for r in first] == [r.id for r in second] == [run.id]
    assert store.get_run(run.id).status == RunStatus.PENDING


def test_ping_passes_when_the_store_can_serve(store: Any) -> None:
    """A reachable, migrated store answers ping without raising."""
    assert store.ping() is None
