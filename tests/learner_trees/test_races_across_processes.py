"""Identical requests racing across two real gateway processes on one Postgres."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from labs.bench.httpclient import HttpConnection
from labs.bench.server import GatewayServer
from solution.shared.keys import TIME_BUCKET_SECONDS
from tests.support.databases import scalar

pytestmark = pytest.mark.slow  # two servers racing

CLIENTS = 32
ROUNDS = 20


class Burst:
    """CLIENTS keep-alive connections, split across the servers, firing together."""

    def __init__(self, servers: tuple[GatewayServer, ...]) -> None:
        self.connections = [servers[n % len(servers)].connect() for n in range(CLIENTS)]
        for connection in self.connections:
            connection.open()
        self.pool = ThreadPoolExecutor(CLIENTS)

    def fire(self, body: dict[str, str]) -> list[tuple[int, str | None]]:
        """Send the same body on every connection at once; return (status, runId) each."""
        start = threading.Barrier(CLIENTS)

        def send(connection: HttpConnection) -> tuple[int, str | None]:
            start.wait()
            answer = connection.post_json("/chat", body)
            found = answer.json()
            return answer.status, found.get("runId") if isinstance(found, dict) else None

        return list(self.pool.map(send, self.connections))

    def close(self) -> None:
        """Close the connections and the threads."""
        self.pool.shutdown()
        for connection in self.connections:
            connection.close()


def new_session(server: GatewayServer) -> str:
    """Open a session through the gateway."""
    connection = server.connect()
    answer = connection.post_json("/sessions", {"userId": "ada"})
    connection.close()
    assert answer.status == 201
    found = answer.json()
    assert isinstance(found, dict)
    return str(found["sessionId"])


def test_identical_requests_across_two_servers_create_one_run_every_time(
    gateway_pair: tuple[GatewayServer, GatewayServer], migrated_database: str
) -> None:
    """32 concurrent copies of one message, half to each server, 20 times: one run, one runId."""
    burst = Burst(gateway_pair)
    try:
        for round_number in range(ROUNDS):
            session_id = new_session(gateway_pair[round_number % 2])
            answers = burst.fire(
                {
                    "sessionId": session_id,
                    "message": "double click",
                    "clientMessageId": f"burst-{round_number}",
                }
            )
            assert_one_run(answers, migrated_database, session_id, round_number)
    finally:
        burst.close()


def test_identical_requests_without_a_client_id_create_one_run_per_time_bucket(
    gateway_pair: tuple[GatewayServer, GatewayServer], migrated_database: str
) -> None:
    """Without clientMessageId, 32 concurrent copies inside one time bucket still make one run."""
    burst = Burst(gateway_pair)
    try:
        rounds = 0
        while rounds < ROUNDS:
            session_id = new_session(gateway_pair[rounds % 2])
            bucket = time.time() // TIME_BUCKET_SECONDS
            answers = burst.fire({"sessionId": session_id, "message": "same words again"})
            if time.time() // TIME_BUCKET_SECONDS != bucket:
                continue  # the burst straddled a bucket boundary: two keys are right; redo it
            assert_one_run(answers, migrated_database, session_id, rounds)
            rounds += 1
    finally:
        burst.close()


def assert_one_run(
    answers: list[tuple[int, str | None]], database_url: str, session_id: str, round_number: int
) -> None:
    """Every answer a 202 with the same runId, and one row in runs for the session."""
    assert {status for status, _ in answers} == {202}, answers
    assert len({run_id for _, run_id in answers}) == 1, answers
    rows = scalar(
        database_url, "SELECT count(*) FROM solution.runs WHERE session_id = %s", session_id
    )
    assert rows == 1, f"round {round_number}: {rows} runs for one message"
