"""Postgres goes away under load and comes back: 503s, not crashes; nothing acknowledged lost."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field

import psycopg2
import pytest

from labs.bench.httpclient import Answer
from labs.bench.server import GatewayServer
from labs.pg.scratch import migrate
from tests.reliability.conftest import GATEWAY
from tests.support.pgcluster import TempCluster

CLIENTS = 4
ENOUGH = 25  # answers to see in each phase before moving on
PATIENCE = 60.0  # seconds before a phase that never completes fails the test


@dataclass
class Steady:
    """A steady stream of POST /chat from a few clients, each answer kept with its phase."""

    server: GatewayServer
    session_id: str
    phase: str = "up"
    answers: list[tuple[str, int, object]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def client(self, number: int) -> None:
        """Send messages back to back, pausing a little, until stopped."""
        connection = self.server.connect(timeout=15)
        sequence = 0
        while not self.stop.is_set():
            phase = self.phase
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
                self.answers.append((settled, answer.status, payload))
            sequence += 1
            time.sleep(0.005)
        connection.close()

    def wait_for(self, phase: str, status: int) -> float:
        """Block until ENOUGH answers with this status arrived in this phase; return the wait."""
        started = time.monotonic()
        while sum(1 for p, s, _ in self.answers if p == phase and s == status) < ENOUGH:
            assert time.monotonic() - started < PATIENCE, f"no {status}s while {phase}"
            assert not self.failures, self.failures[:3]
            time.sleep(0.02)
        return time.monotonic() - started


def once(server: GatewayServer, path: str, payload: object = None) -> Answer:
    """One GET (or POST, given a payload) on a fresh connection."""
    connection = server.connect(timeout=15)
    try:
        if payload is None:
            return connection.request("GET", path)
        return connection.post_json(path, payload)
    finally:
        connection.close()


@pytest.mark.postgres
def test_intake_survives_the_database_going_down_and_coming_back(
    own_cluster: TempCluster,
) -> None:
    """Down: 503 JSON, readiness red, liveness green. Back: 202 again, no acknowledged run lost."""
    url = own_cluster.create_database(f"koda_faults_{uuid.uuid4().hex[:8]}")
    migrate(url, "solution")
    with GatewayServer(
        GATEWAY, {"DATABASE_URL": url, "DB_SCHEMA": "solution"}, workers=2, threads=4
    ) as server:
        workers_before = server.worker_pids()
        session = once(server, "/sessions", {"userId": "ada"})
        steady = Steady(server, str(session.json()["sessionId"]))  # type: ignore[index]
        threads = [threading.Thread(target=steady.client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        try:
            steady.wait_for("up", 202)
            steady.phase = "stopping"
            own_cluster.stop("fast")
            steady.phase = "down"
            first_503 = steady.wait_for("down", 503)
            ready, alive = once(server, "/readyz"), once(server, "/healthz")
            steady.phase = "starting"
            own_cluster.start()
            steady.phase = "back"
            recovery = steady.wait_for("back", 202)
        finally:
            steady.stop.set()
            for thread in threads:
                thread.join()
        ready_after = once(server, "/readyz")
        assert server.alive() and server.worker_pids() == workers_before
    assert not steady.failures, steady.failures[:3]
    down = [(status, body) for phase, status, body in steady.answers if phase == "down"]
    assert {status for status, _ in down} == {503}, down[:3]
    assert all(
        isinstance(body, dict)
        and body["error"] == "store_unavailable"
        and "database" in str(body["message"])
        for _, body in down
    ), down[:3]
    assert (ready.status, alive.status, ready_after.status) == (503, 200, 200)
    others = [
        (phase, status, body) for phase, status, body in steady.answers if status not in (202, 503)
    ]
    assert not others, others[:3]
    acknowledged = {
        str(body["runId"])
        for _, status, body in steady.answers
        if status == 202 and isinstance(body, dict)
    }
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT id FROM solution.runs WHERE id = ANY(%s)", (list(acknowledged),))
        stored = {row[0] for row in cursor.fetchall()}
    connection.close()
    assert acknowledged - stored == set(), "runs answered 202 are missing from the database"
    print(
        f"\nfaults: {len(steady.answers)} answers, {len(acknowledged)} runs acknowledged "
        f"(202) and all stored; "
        f"{len(down)} answers while down, all 503 ({ENOUGH} of them within {first_503:.2f} s "
        f"of the stop); {ENOUGH} 202s again {recovery:.2f} s after the restart; "
        f"readyz while down: {ready.body.decode().strip()}"
    )
