"""Postgres stops, then freezes, under steady load: 503s within seconds, liveness always green.

The gateway runs as deploy/ serves it, gunicorn behind nginx. Four clients post
messages through nginx back to back while a prober asks gunicorn's /healthz ten
times a second. Postgres is stopped (`pg_ctl -m fast`) and started again, then
frozen (SIGSTOP on the postmaster and every backend: a server that accepts
connections and never answers) and thawed. Throughout, every /healthz answers
within a second, every intake answer is a 202 or a JSON 503 within a bound, and
no run whose client got a 202 is missing from the database afterwards.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from runpy import run_path

import psycopg2
import pytest

from labs.bench.httpclient import Answer, HttpConnection
from labs.pg.scratch import migrate
from tests.support.pgcluster import TempCluster
from tests.support.servers import GUNICORN_CONFIG, Nginx, deployed_gateway

CLIENTS = 4  # fewer than a worker's threads: the load is steady, not an overload
ENOUGH = 25  # answers to see in each phase before moving on
PATIENCE = 60.0  # seconds before a phase that never completes fails the test
LIVENESS_BUDGET = 1.0  # seconds a /healthz answer may take, whatever the database does
CONFIG = {"MOCK": "0", "DB_SCHEMA": "solution"}


def answer_bound() -> float:
    """The longest an intake answer may take while the database hangs.

    The first wait runs out after DATABASE_WAIT_SECONDS; the store then retries
    once on a fresh connection, which gets HUNG_WAIT_SECONDS; one second more
    for the rest of the request.
    """
    settings = run_path(str(GUNICORN_CONFIG))
    return float(settings["DATABASE_WAIT_SECONDS"]) + float(settings["HUNG_WAIT_SECONDS"]) + 1


@dataclass
class Steady:
    """A steady stream of POST /chat from a few clients, each answer kept with its phase."""

    port: int
    session_id: str
    phase: str = "up"
    answers: list[tuple[str, int, object, float]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def client(self, number: int) -> None:
        """Send messages back to back, pausing a little, until stopped."""
        connection = HttpConnection("127.0.0.1", self.port, timeout=60)
        sequence = 0
        while not self.stop.is_set():
            phase = self.phase
            started = time.monotonic()
            try:
                answer = connection.post_json(
                    "/chat",
                    {
                        "sessionId": self.session_id,
                        "message": f"steady {number}-{sequence}",
                        "clientMessageId": f"steady-{number}-{sequence}",
                    },
                )
                payload = answer.json()
            except (OSError, ValueError) as error:  # the gateway went away or spoke non-JSON
                self.failures.append(f"{phase}: {type(error).__name__}: {error}")
                connection.close()
            else:
                # A request in flight across a phase change belongs to no phase, but a 202
                # it got still counts: it must be in the database.
                settled = phase if phase == self.phase else "changing"
                took = time.monotonic() - started
                self.answers.append((settled, answer.status, payload, took))
            sequence += 1
            time.sleep(0.005)
        connection.close()

    def wait_for(self, phase: str, status: int) -> float:
        """Block until ENOUGH answers with this status arrived in this phase; return the wait."""
        started = time.monotonic()
        while sum(1 for p, s, _, _ in self.answers if p == phase and s == status) < ENOUGH:
            assert time.monotonic() - started < PATIENCE, f"no {status}s while {phase}"
            assert not self.failures, self.failures[:3]
            time.sleep(0.02)
        return time.monotonic() - started

    def in_phase(self, phase: str) -> list[tuple[int, object, float]]:
        """The (status, body, seconds) of the answers that came in this phase."""
        return [(s, body, took) for p, s, body, took in self.answers if p == phase]


@dataclass
class Prober:
    """Asks /healthz ten times a second on a fresh connection, as an orchestrator would."""

    port: int
    probes: list[tuple[float, int]] = field(default_factory=list)  # (seconds, status; 0: none)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        """Probe until stopped."""
        while not self.stop.is_set():
            started = time.monotonic()
            connection = HttpConnection("127.0.0.1", self.port, timeout=30)
            try:
                status = connection.request("GET", "/healthz").status
            except OSError:
                status = 0
            finally:
                connection.close()
            self.probes.append((time.monotonic() - started, status))
            time.sleep(0.1)


def once(port: int, path: str, payload: object = None) -> tuple[Answer, float]:
    """One GET (or POST, given a payload) on a fresh connection, and how long it took."""
    connection = HttpConnection("127.0.0.1", port, timeout=60)
    started = time.monotonic()
    try:
        answer = (
            connection.request("GET", path)
            if payload is None
            else connection.post_json(path, payload)
        )
        return answer, time.monotonic() - started
    finally:
        connection.close()


def postgres_pids(cluster: TempCluster) -> list[int]:
    """The postmaster's pid, then its children's (every backend and helper process)."""
    postmaster = int((cluster.datadir / "postmaster.pid").read_text().split()[0])
    children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    return [postmaster, *(int(pid) for pid in children)]


def freeze(pids: list[int]) -> None:
    """Stop every process, postmaster first, so none starts another."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)


def thaw(pids: list[int]) -> None:
    """Continue every process, postmaster last."""
    for pid in reversed(pids):
        with contextlib.suppress(ProcessLookupError):  # a backend that ended meanwhile
            os.kill(pid, signal.SIGCONT)


def stored_runs(url: str, ids: set[str]) -> set[str]:
    """Which of these run ids are in the database."""
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT id FROM solution.runs WHERE id = ANY(%s)", (list(ids),))
        stored = {row[0] for row in cursor.fetchall()}
    connection.close()
    return stored


@pytest.mark.postgres
def test_intake_survives_the_database_stopping_and_freezing(own_cluster: TempCluster) -> None:
    """Stopped, then frozen: 503 JSON within the bound, /healthz within 1 s, no 202 lost."""
    url = own_cluster.create_database(f"koda_faults_{uuid.uuid4().hex[:8]}")
    migrate(url, "solution")
    bound = answer_bound()
    pids: list[int] = []
    with deployed_gateway("solution", CONFIG | {"DATABASE_URL": url}) as gunicorn:
        with Nginx(gunicorn.port) as nginx:
            session, _ = once(nginx.port, "/sessions", {"userId": "ada"})
            steady = Steady(nginx.port, str(session.json()["sessionId"]))  # type: ignore[index]
            prober = Prober(gunicorn.port)
            threads = [threading.Thread(target=steady.client, args=(n,)) for n in range(CLIENTS)]
            threads.append(threading.Thread(target=prober.run))
            for thread in threads:
                thread.start()
            figures: dict[str, float] = {}
            try:
                steady.wait_for("up", 202)
                steady.phase = "stopping"
                own_cluster.stop("fast")
                steady.phase = "stopped"
                figures["stopped"] = steady.wait_for("stopped", 503)
                steady.phase = "starting"
                own_cluster.start()
                steady.phase = "started"
                figures["started"] = steady.wait_for("started", 202)
                pids = postgres_pids(own_cluster)
                steady.phase = "freezing"
                freeze(pids)
                steady.phase = "frozen"
                figures["frozen"] = steady.wait_for("frozen", 503)
                (ready, ready_took), (alive, alive_took) = (
                    once(gunicorn.port, "/readyz"),
                    once(gunicorn.port, "/healthz"),
                )
                steady.phase = "thawing"
                thaw(pids)
                steady.phase = "thawed"
                figures["thawed"] = steady.wait_for("thawed", 202)
            finally:
                thaw(pids)
                steady.stop.set()
                prober.stop.set()
                for thread in threads:
                    thread.join()
            ready_after, _ = once(gunicorn.port, "/readyz")
        assert gunicorn.process is not None and gunicorn.process.poll() is None

    assert not steady.failures, steady.failures[:3]
    slow_probes = [(took, status) for took, status in prober.probes if took > LIVENESS_BUDGET]
    failed_probes = [(took, status) for took, status in prober.probes if status != 200]
    assert not slow_probes and not failed_probes, (slow_probes[:3], failed_probes[:3])
    for phase in ("stopped", "frozen"):
        down = steady.in_phase(phase)
        assert {status for status, _, _ in down} == {503}, down[:3]
        assert all(
            isinstance(body, dict) and body["error"] == "store_unavailable" for _, body, _ in down
        ), down[:3]
        slowest = max(took for _, _, took in down)
        assert slowest < bound, f"{phase}: an answer took {slowest:.1f} s, over {bound:.1f} s"
    assert (ready.status, alive.status, ready_after.status) == (503, 200, 200)
    assert ready_took < bound and alive_took < LIVENESS_BUDGET
    others = [(p, s, body) for p, s, body, _ in steady.answers if s not in (202, 503)]
    assert not others, others[:3]
    acknowledged = {
        str(body["runId"])
        for _, status, body, _ in steady.answers
        if status == 202 and isinstance(body, dict)
    }
    assert acknowledged - stored_runs(url, acknowledged) == set(), "a run answered 202 is lost"

    frozen_503s = steady.in_phase("frozen")
    print(
        f"\nfaults: {len(steady.answers)} requests, {len(acknowledged)} runs acknowledged (202), "
        f"all stored; {sum(1 for _, s, _, _ in steady.answers if s == 503)} answered 503.\n"
        f"  stopped: {ENOUGH} 503s within {figures['stopped']:.2f} s; "
        f"{ENOUGH} 202s {figures['started']:.2f} s after the start.\n"
        f"  frozen: {ENOUGH} 503s within {figures['frozen']:.2f} s, the slowest "
        f"{max(t for _, _, t in frozen_503s):.2f} s; "
        f"{ENOUGH} 202s {figures['thawed']:.2f} s after the thaw.\n"
        f"  /healthz: {len(prober.probes)} probes, the slowest "
        f"{max(t for t, _ in prober.probes):.3f} s; /readyz while frozen: {ready.status} "
        f"in {ready_took:.2f} s"
    )
