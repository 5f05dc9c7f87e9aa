"""Liveness and readiness differ exactly when the database is down, and intake says 503."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask.testing import FlaskClient

from solution.gateway import create_app
from solution.infra.sql import SqlStore
from tests.support.migrations import migrate
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
    assert ready.get_json() == {"status": "unavailable", "reason": "database unreachable"}
    assert gateway.get("/healthz").status_code == 200
    chat = gateway.post("/chat", json={"sessionId": session_id, "message": "hello?"})
    assert chat.status_code == 503 and chat.is_json and chat.headers["Retry-After"] == "1"
    assert chat.get_json()["error"] == "store_unavailable"
    assert chat.get_json()["reason"] == "database unreachable"


@pytest.mark.parametrize("outage", ["stopped", "no tables"])
def test_unavailable_answers_name_the_kind_of_problem_and_keep_the_details_for_the_log(
    own_cluster: TempCluster, outage: str, caplog: pytest.LogCaptureFixture
) -> None:
    """/readyz and a 503 say what kind of problem, never the host, port, user or driver text."""
    url = own_cluster.create_database("koda")
    if outage == "no tables":
        kind, detail = "schema missing", "alembic -x tree=solution upgrade head"
    else:
        migrate(url)
        kind, detail = "database unreachable", f"{own_cluster.port}/koda"
    store = SqlStore(url, schema="solution", pool_size=2)
    client = create_app(store).test_client()
    if outage == "stopped":
        own_cluster.stop()
    ready = client.get("/readyz")
    chat = client.post("/chat", json={"sessionId": "s", "message": "hello?"})
    store.close()
    assert ready.get_json() == {"status": "unavailable", "reason": kind}
    assert (chat.status_code, chat.get_json()["reason"]) == (503, kind)
    secrets = [str(own_cluster.socket_dir), str(own_cluster.port), "postgres", "koda"]
    for answer in (ready, chat):
        said = answer.get_data(as_text=True)
        assert not [secret for secret in secrets if secret in said], said
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert detail in logged


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
