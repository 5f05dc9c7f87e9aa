"""Workers racing to claim one pending run: the conditional write lets exactly one win."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from solution.infra import make_store
from solution.infra.memory import MemoryStore
from solution.infra.store import Store
from solution.shared.errors import TransitionConflictError
from solution.shared.states import RunStatus

WORKERS = 8
ROUNDS = 10


@pytest.fixture(params=["memory", "postgres"])
def worker_stores(request: pytest.FixtureRequest) -> Iterator[list[Store]]:
    """One store per worker: a shared MemoryStore, or a SqlStore (own pool) each on Postgres."""
    if request.param == "memory":
        shared = MemoryStore()
        yield [shared] * WORKERS
        return
    url = request.getfixturevalue("migrated_database")
    stores = [make_store({"DATABASE_URL": url, "DB_SCHEMA": "solution"}) for _ in range(WORKERS)]
    yield stores
    for store in stores:
        store.close()  # type: ignore[attr-defined]


def claim_all_at_once(stores: list[Store], run_id: str) -> list[bool]:
    """Every worker tries pending -> running on the same run at the same moment."""
    start = threading.Barrier(len(stores))

    def claim(store: Store) -> bool:
        start.wait()
        try:
            store.transition(run_id, RunStatus.PENDING, RunStatus.RUNNING)
        except TransitionConflictError:
            return False
        return True

    with ThreadPoolExecutor(len(stores)) as pool:
        return list(pool.map(claim, stores))


def test_concurrent_claims_of_one_pending_run_have_exactly_one_winner(
    worker_stores: list[Store],
) -> None:
    """8 workers claim the same pending run at once, 10 times over: one wins each time."""
    store = worker_stores[0]
    session = store.create_session("ada", "claims")
    for round_number in range(ROUNDS):
        run = store.create_run(session.id, "claim me", f"claim-{round_number}").run
        wins = claim_all_at_once(worker_stores, run.id)
        assert wins.count(True) == 1, f"round {round_number}: {wins.count(True)} winners"
        assert store.get_run(run.id).status == RunStatus.RUNNING


def test_a_claim_after_the_winner_is_refused_naming_the_state_it_found(
    worker_stores: list[Store],
) -> None:
    """A late worker's claim is refused and told the run is already running."""
    store = worker_stores[0]
    session = store.create_session("ada", "late claim")
    run = store.create_run(session.id, "claim me", "late-claim").run
    store.transition(run.id, RunStatus.PENDING, RunStatus.RUNNING)
    with pytest.raises(TransitionConflictError) as refused:
        worker_stores[-1].transition(run.id, RunStatus.PENDING, RunStatus.RUNNING)
    assert refused.value.actual == RunStatus.RUNNING
