"""What MemoryStore does beyond the shared contract: copies out, one lock for all threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from solution.infra import MemoryStore
from solution.shared.states import RunStatus


def test_records_handed_out_are_copies_not_the_stored_rows() -> None:
    """Changing a returned run does not change the store, as with rows read from a database."""
    store = MemoryStore()
    session = store.create_session("ada", "t")
    run = store.create_run(session.id, "hi", "k1").run
    run.status = RunStatus.DONE
    assert store.get_run(run.id).status == RunStatus.PENDING


def test_many_threads_inserting_one_key_leave_one_row() -> None:
    """The lock makes the lookup and the insert one step, so 32 racing threads make one run."""
    store = MemoryStore()
    session = store.create_session("ada", "t")
    with ThreadPoolExecutor(32) as pool:
        outcomes = list(pool.map(lambda _: store.create_run(session.id, "hi", "k1"), range(32)))
    assert len({o.run.id for o in outcomes}) == 1
    assert sum(o.created for o in outcomes) == 1
    assert store.count_runs_with_key("k1") == 1
