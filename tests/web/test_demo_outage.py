"""The demo executor when the store stops answering mid-run: it says so, waits, and resumes.

On the memory store a wrapper makes the store fail at an exact call, so each
point of the script is covered; on Postgres a server of the test's own is
stopped and started again.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.pg.cluster import Autocommit, TempCluster
from tests.support.migrations import migrate

from .conftest import make_app
from .pages import HTMX, send, wait_for


class FlakyStore:
    """A store that stops answering at the executor's nth call of one method, until it's back."""

    def __init__(self, store: Any, unavailable: type[Exception], method: str, nth: int) -> None:
        self._store = store
        self._unavailable = unavailable
        self._trip = (method, nth)
        self._calls = 0
        self.went_down = threading.Event()

    def come_back(self) -> None:
        """Answer again from the next call on."""
        self.went_down.clear()
        self._trip = ("", 0)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            # Only the executor's calls count, so the page's own reads do not move the cut.
            if name == self._trip[0] and threading.current_thread().name.startswith("demo-"):
                self._calls += 1
                if self._calls >= self._trip[1]:
                    self.went_down.set()
            if self.went_down.is_set():
                raise self._unavailable("connection refused (the test stopped the store)")
            return method(*args, **kwargs)

        return call


@pytest.fixture
def demo_app() -> Iterator[Flask]:
    """A dashboard on the memory store whose demo executor takes a step every 20 ms."""
    yield from make_app(DEMO_PACE=0.02)


def flaky_bench(app: Flask, method: str, nth: int) -> FlakyStore:
    """Put a FlakyStore under the solution bench's executor (the gateway keeps the real one)."""
    bench = app.extensions["mini_koda_lab"].bench("solution")
    flaky = FlakyStore(bench.store, bench.unavailable, method, nth)
    bench.store = flaky
    return flaky


def shown_seqs(page: str) -> list[int]:
    """The seqs of the stored messages in a run page's strip, in order."""
    return [int(s) for s in re.findall(r'data-seq="(\d+)" data-kind="message"', page)]


# Where the store fails: the read after the claim, a message mid-stream, the final move.
CUT_POINTS = [("get_run", 1), ("append_message", 3), ("transition", 3)]


@pytest.mark.parametrize(("method", "nth"), CUT_POINTS)
def test_a_run_cut_short_by_the_store_resumes_when_it_answers(
    demo_app: Flask, method: str, nth: int
) -> None:
    """The page says the executor waits for the store; once back, the run ends done, 0..n."""
    client: FlaskClient = demo_app.test_client()
    flaky = flaky_bench(demo_app, method, nth)
    run_id, _ = send(client, "solution", client_id=f"cut-{method}")
    client.post("/runs/solution/demo", data={"switch": "on", "pace": "normal"}, headers=HTMX)
    assert flaky.went_down.wait(10), "the store never went down"
    page = wait_for(client, "/runs/solution", r'id="executor-stalled"')
    assert run_id in page and "resumes" in page and "the test stopped the store" in page
    executor = demo_app.extensions["mini_koda_lab"].bench("solution").executor
    assert executor.active, "the executor thread must outlive the outage"
    flaky.come_back()
    detail = wait_for(client, f"/runs/solution/{run_id}", r'id="run-status"[^>]*>\s*done')
    seqs = shown_seqs(detail)
    assert seqs == list(range(len(seqs))) and len(seqs) > 2
    assert 'data-outcome="unavailable"' in detail
    runs = wait_for(client, "/runs/solution", r'data-moving="no"')
    assert 'data-outcome="resumed"' in runs and 'id="executor-stalled"' not in runs


def test_a_store_down_between_runs_is_shown_and_waited_out(demo_app: Flask) -> None:
    """With nothing in play, the outage still shows; a run sent afterwards is played."""
    client: FlaskClient = demo_app.test_client()
    flaky = flaky_bench(demo_app, "pending_runs", 1)
    client.post("/runs/solution/demo", data={"switch": "on", "pace": "normal"}, headers=HTMX)
    page = wait_for(client, "/runs/solution", r'id="executor-stalled"')
    assert "It resumes" in page
    flaky.come_back()
    run_id, _ = send(client, "solution", client_id="after")
    wait_for(client, f"/runs/solution/{run_id}", r'id="run-status"[^>]*>\s*done')


def started_at(cluster: TempCluster) -> object:
    """When the cluster's server last started, as Postgres itself reports it."""
    with Autocommit(cluster.url()) as cursor:
        cursor.execute("SELECT pg_postmaster_start_time()")
        ((started,),) = cursor.fetchall()
        return started


@pytest.mark.postgres
def test_postgres_stopped_mid_run_and_started_again(
    own_cluster: TempCluster, pg_cluster: TempCluster
) -> None:
    """The server stops while a run streams: a notice, a live thread, then done after restart.

    Only this test's cluster is stopped: the session's shared one keeps running.
    """
    shared_since = started_at(pg_cluster)
    url = own_cluster.create_database("koda")
    migrate(url, "solution")
    for app in make_app(DATABASE_URL=url, DEMO_PACE=0.4, DEMO_CHUNKS=6):
        client = app.test_client()
        executor = app.extensions["mini_koda_lab"].bench("solution").executor
        client.post("/runs/solution/demo", data={"switch": "on", "pace": "normal"}, headers=HTMX)
        run_id, _ = send(client, "solution", client_id="pg-outage")
        wait_for(client, f"/runs/solution/{run_id}", r'id="run-status"[^>]*>\s*streaming')
        own_cluster.stop()
        try:
            page = wait_for(client, "/runs/solution", r'id="executor-stalled"')
            assert "store did not answer" in page and executor.active
        finally:
            own_cluster.start()
        detail = wait_for(client, f"/runs/solution/{run_id}", r'id="run-status"[^>]*>\s*done')
        seqs = shown_seqs(detail)
        assert seqs == list(range(len(seqs))) and len(seqs) == 7
    assert started_at(pg_cluster) == shared_since
