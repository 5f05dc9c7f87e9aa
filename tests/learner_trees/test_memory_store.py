"""What MemoryStore does beyond the shared contract: copies out, one lock for all threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from solution.infra.memory import MemoryStore
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


def test_the_starters_naive_regions_still_store_duplicates_and_the_indexes_count_them() -> None:
    """As shipped, a second run for a key and a second message at a seq are stored, and counted."""
    from starter.infra.memory import MemoryStore as StarterStore

    store = StarterStore()
    session = store.create_session("ada", "t")
    first = store.create_run(session.id, "hi", "k1").run
    second = store.create_run(session.id, "hi", "k1").run
    assert first.id != second.id and store.count_runs_with_key("k1") == 2
    store.append_message(session.id, first.id, "user", "one", 0)
    store.append_message(session.id, first.id, "user", "two", 0)
    assert [m.content for m in store.messages_for_run(first.id)] == ["one", "two"]


def test_each_run_reads_back_only_its_own_messages_in_seq_order() -> None:
    """messages_for_run looks at one run's messages, whatever the others hold."""
    store = MemoryStore()
    session = store.create_session("ada", "t")
    runs = [store.create_run(session.id, "hi", f"k{n}").run for n in range(3)]
    for seq in (2, 0, 1):
        for run in runs:
            store.append_message(session.id, run.id, "user", f"{run.id}:{seq}", seq)
    for run in runs:
        read = store.messages_for_run(run.id)
        assert [m.seq for m in read] == [0, 1, 2]
        assert all(m.run_id == run.id for m in read)


def test_pending_runs_forget_a_run_once_it_moves_and_respect_the_limit() -> None:
    """A claimed run leaves the pending list; the oldest pending runs come first."""
    store = MemoryStore()
    session = store.create_session("ada", "t")
    runs = [store.create_run(session.id, "hi", f"k{n}").run for n in range(4)]
    store.transition(runs[1].id, RunStatus.PENDING, RunStatus.RUNNING)
    assert [r.id for r in store.pending_runs(10)] == [runs[0].id, runs[2].id, runs[3].id]
    assert [r.id for r in store.pending_runs(2)] == [runs[0].id, runs[2].id]
    assert store.pending_runs(0) == []


class NoScan(dict):  # type: ignore[type-arg]
    """A table that fails the test when something walks every row of it."""

    def _scanned(self, *args: object) -> object:
        raise AssertionError("the store walked every row: a unique rule must be one lookup")

    __iter__ = values = items = keys = _scanned  # type: ignore[assignment]


class NoScanList(list):  # type: ignore[type-arg]
    """A list of rows that fails the test when something walks all of it."""

    __iter__ = NoScan._scanned  # type: ignore[assignment]


def no_scan(table: object) -> object:
    """The same rows, in a container that refuses to be walked whole."""
    return NoScanList(table) if isinstance(table, list) else NoScan(table)  # type: ignore[call-overload]


def test_the_unique_rules_are_lookups_not_scans_of_every_row() -> None:
    """With many rows stored, writing and reading one run never walks the whole table."""
    store = MemoryStore()
    session = store.create_session("ada", "t")
    runs = [store.create_run(session.id, "hi", f"key-{n}").run for n in range(200)]
    for run in runs[:50]:
        store.append_message(session.id, run.id, "user", "hi", 0)
    for table in ("_runs", "_sessions", "_messages"):
        setattr(store, table, no_scan(getattr(store, table)))
    again = store.create_run(session.id, "hi", "key-7")
    fresh = store.create_run(session.id, "hi", "key-new")
    assert (again.created, again.run.id) == (False, runs[7].id)
    assert fresh.created
    assert store.count_runs_with_key("key-7") == 1
    store.append_message(session.id, runs[3].id, "assistant", "more", 1)
    assert [m.seq for m in store.messages_for_run(runs[3].id)] == [0, 1]
    assert len(store.pending_runs(5)) == 5
