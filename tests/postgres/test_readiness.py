"""Liveness and readiness differ exactly when the database is down, and intake says 503."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from solution.gateway import create_app
from solution.infra.sql import SqlStore
from tests.postgres.conftest import migrate
from tests.support.pgcluster import TempCluster


@pytest.fixture
def gateway(own_cluster: TempCluster) -> Iterator[FlaskClient]:
    """The solution's gateway on a migrated database in own_cluster."""
    url = own_cluster.create_database("koda")
    migrate(url)
    store = SqlStore(url, schema="solution", pool_size=2)
    yield create_app(store).test_client()
    store.close()


def test_readiness_goes_red_and_intake_answers_503_while_the_database_is_down(
    own_cluster: TempCluster, gateway: FlaskClient
) -> None:
    """Database stopped: /readyz 503 with a reason, /healthz 200, POST /chat a JSON 503."""
    session_id = gateway.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    assert gateway.get("/readyz").status_code == 200
    own_cluster.stop()
    ready = gateway.get("/readyz")
    assert ready.status_code == 503
    assert "cannot reach the database" in ready.get_json()["reason"]
    assert gateway.get("/healthz").status_code == 200
    chat = gateway.post("/chat", json={"sessionId": session_id, "message": "hello?"})
    assert chat.status_code == 503 and chat.is_json
    assert chat.get_json()["error"] == "store_unavailable"


def test_service_resumes_without_a_restart_when_the_database_returns(
    own_cluster: TempCluster, gateway: FlaskClient
) -> None:
    """After the database comes back, the same gateway is ready and accepts with 202 again."""
    session_id = gateway.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    own_cluster.stop()
    assert gateway.get("/readyz").status_code == 503
    own_cluster.start()
    assert gateway.get("/readyz").status_code == 200
    chat = gateway.post("/chat", json={"sessionId": session_id, "message": "back again"})
    assert chat.status_code == 202
