"""The gateway's answers to good and bad input: always JSON, never a 500, never a partial row."""

from __future__ import annotations

import pytest

from solution.gateway.requests import MAX_BODY_BYTES
from tests.support.gateways import Gateway


def runs_in(gateway: Gateway) -> int:
    """Count every run the store holds."""
    return len(gateway.store._runs)


def test_a_valid_message_is_accepted_with_202_and_a_pending_run(gateway: Gateway) -> None:
    """POST /chat answers 202 with the run id, its status and where to poll it."""
    session_id = gateway.new_session()
    answer = gateway.client.post("/chat", json={"sessionId": session_id, "message": "hi"})
    assert answer.status_code == 202
    body = answer.get_json()
    assert body["status"] == "pending" and len(body["runId"]) == 26
    assert answer.headers["Location"] == f"/runs/{body['runId']}"
    assert answer.headers["Idempotent-Replayed"] == "false"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"message": "hi"}, "sessionId"),
        ({"sessionId": "", "message": "hi"}, "sessionId"),
        ({"sessionId": "   ", "message": "hi"}, "sessionId"),
        ({"sessionId": "S"}, "message"),
        ({"sessionId": "S", "message": ""}, "message"),
        ({"sessionId": "S", "message": " \n\t "}, "message"),
        ({"sessionId": 7, "message": "hi"}, "sessionId"),
        ({"sessionId": "S", "message": ["hi"]}, "message"),
        ({"sessionId": "S", "message": {"text": "hi"}}, "message"),
        ({"sessionId": "S", "message": "hi", "clientMessageId": 12}, "clientMessageId"),
        ({"sessionId": "S", "message": "hi", "clientMessageId": ""}, "clientMessageId"),
        ({"sessionId": "S", "message": "nul\x00byte"}, "message"),
        ({"sessionId": "S", "message": "lone \ud800 surrogate"}, "message"),
        ({"sessionId": "S" * 500, "message": "hi"}, "sessionId"),
    ],
)
def test_a_missing_blank_or_mistyped_field_gets_400_naming_it(
    gateway: Gateway, body: dict[str, object], field: str
) -> None:
    """Each bad field is refused with 400 and a JSON error that names it; no run is stored."""
    if body.get("sessionId") == "S":
        body = {**body, "sessionId": gateway.new_session()}
    answer = gateway.client.post("/chat", json=body)
    assert answer.status_code == 400
    assert answer.get_json()["field"] == field
    assert field in answer.get_json()["message"]
    assert runs_in(gateway) == 0


@pytest.mark.parametrize(
    ("data", "content_type", "status"),
    [
        ("{not json", "application/json", 400),
        ("", "application/json", 400),
        ("null", "application/json", 400),
        ("[1, 2]", "application/json", 400),
        ('"a string"', "application/json", 400),
        ("sessionId=S&message=hi", "application/x-www-form-urlencoded", 415),
        ('{"sessionId": "S", "message": "hi"}', "text/plain", 415),
        ("\xff\xfe garbage", "application/json", 400),
        (b"\xff\xfe not utf-8", "application/json", 400),
        (b'{"sessionId": "S", "message": "caf\xe9"}', "application/json", 400),
    ],
)
def test_a_body_that_is_not_a_json_object_is_refused(
    gateway: Gateway, data: str | bytes, content_type: str, status: int
) -> None:
    """Non-JSON bodies get 400, other content types 415, both as JSON errors."""
    answer = gateway.client.post("/chat", data=data, content_type=content_type)
    assert answer.status_code == status
    assert answer.is_json and answer.get_json()["error"]
    assert runs_in(gateway) == 0


def test_a_body_over_the_documented_limit_gets_413(gateway: Gateway) -> None:
    """A body larger than MAX_BODY_BYTES is refused before it is parsed."""
    session_id = gateway.new_session()
    huge = {"sessionId": session_id, "message": "x" * (MAX_BODY_BYTES + 1)}
    answer = gateway.client.post("/chat", json=huge)
    assert answer.status_code == 413
    assert answer.get_json()["error"] == "request_entity_too_large"
    assert runs_in(gateway) == 0


def test_an_unknown_session_gets_404_and_stores_nothing(gateway: Gateway) -> None:
    """A run cannot exist without its session (the foreign key)."""
    answer = gateway.client.post("/chat", json={"sessionId": "nope", "message": "hi"})
    assert answer.status_code == 404
    assert answer.get_json() == {
        "error": "session_not_found",
        "message": "session 'nope' does not exist",
        "sessionId": "nope",
    }
    assert runs_in(gateway) == 0


def test_a_duplicate_request_gets_the_same_run_marked_as_a_replay(
    solution_gateway: Gateway,
) -> None:
    """The second identical request answers 202 with the first run id, flagged as replayed."""
    body = {"sessionId": solution_gateway.new_session(), "message": "hi", "clientMessageId": "c1"}
    first = solution_gateway.client.post("/chat", json=body)
    second = solution_gateway.client.post("/chat", json=body)
    assert second.status_code == 202
    assert second.get_json()["runId"] == first.get_json()["runId"]
    assert second.headers["Idempotent-Replayed"] == "true"
    assert runs_in(solution_gateway) == 1


def test_a_client_message_id_reused_for_another_message_gets_409(
    solution_gateway: Gateway,
) -> None:
    """Reusing an id for different text is a client bug: 409, not a silent replay."""
    session_id = solution_gateway.new_session()
    first = solution_gateway.client.post(
        "/chat", json={"sessionId": session_id, "message": "one", "clientMessageId": "c1"}
    )
    second = solution_gateway.client.post(
        "/chat", json={"sessionId": session_id, "message": "two", "clientMessageId": "c1"}
    )
    assert second.status_code == 409
    assert second.get_json()["runId"] == first.get_json()["runId"]
    assert runs_in(solution_gateway) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "userId"),
        ({"userId": ""}, "userId"),
        ({"userId": 1}, "userId"),
        ({"userId": "ada", "title": 5}, "title"),
    ],
)
def test_a_bad_new_session_body_gets_400_naming_the_field(
    gateway: Gateway, body: dict[str, object], field: str
) -> None:
    """POST /sessions validates like POST /chat."""
    answer = gateway.client.post("/sessions", json=body)
    assert answer.status_code == 400
    assert answer.get_json()["field"] == field
    assert gateway.store._sessions == {}


@pytest.mark.parametrize("run_id", ["%00", "a%00b", "r" * 129])
def test_a_run_id_the_database_could_not_hold_is_400_naming_it(
    gateway: Gateway, run_id: str
) -> None:
    """A NUL or an over-long id in the URL is refused before any store sees it."""
    answer = gateway.client.get(f"/runs/{run_id}")
    assert answer.status_code == 400
    assert answer.get_json()["field"] == "runId"


def test_a_run_can_be_read_back_and_an_unknown_one_is_404(gateway: Gateway) -> None:
    """GET /runs/<id> reports the run, or a JSON 404 naming the id."""
    session_id = gateway.new_session()
    run_id = gateway.client.post(
        "/chat", json={"sessionId": session_id, "message": "hi"}
    ).get_json()["runId"]
    run = gateway.client.get(f"/runs/{run_id}").get_json()
    assert (run["runId"], run["sessionId"], run["status"]) == (run_id, session_id, "pending")
    missing = gateway.client.get("/runs/nope")
    assert missing.status_code == 404 and missing.get_json()["runId"] == "nope"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/nowhere", 404), ("GET", "/chat", 405), ("DELETE", "/sessions", 405)],
)
def test_unknown_routes_and_methods_answer_json(
    gateway: Gateway, method: str, path: str, status: int
) -> None:
    """Even the framework's own errors come back as JSON."""
    answer = gateway.client.open(path, method=method)
    assert answer.status_code == status and answer.is_json


def test_a_method_a_route_refuses_is_a_json_405_naming_the_methods_it_takes(
    gateway: Gateway,
) -> None:
    """Every route answers a method it lacks with 405, JSON, and an Allow header listing its own."""
    for rule in gateway.client.application.url_map.iter_rules():
        allowed = set(rule.methods or ())
        path = rule.rule.replace("<", "").replace(">", "")  # /runs/<run_id> -> /runs/run_id
        refused = next(m for m in ("PATCH", "DELETE", "PUT", "POST") if m not in allowed)
        answer = gateway.client.open(path, method=refused)
        assert answer.status_code == 405 and answer.is_json, (rule.rule, answer.status_code)
        assert set(answer.headers["Allow"].split(", ")) == allowed, rule.rule


def test_liveness_and_readiness_are_both_green_on_a_working_store(gateway: Gateway) -> None:
    """/healthz and /readyz answer 200 when the store answers."""
    assert gateway.client.get("/healthz").get_json() == {"status": "ok"}
    assert gateway.client.get("/readyz").get_json() == {"status": "ready"}


def test_an_unexpected_failure_is_a_json_500_without_a_traceback(gateway: Gateway) -> None:
    """A bug below the gateway still answers JSON, and the body shows no internals."""
    session_id = gateway.new_session()

    def broken(*args: object) -> None:
        raise RuntimeError("secret internals")

    gateway.store.create_run = broken
    answer = gateway.client.post("/chat", json={"sessionId": session_id, "message": "hi"})
    assert answer.status_code == 500
    assert answer.get_json() == {
        "error": "internal_error",
        "message": "the gateway failed unexpectedly",
    }
    assert "secret" not in answer.get_data(as_text=True)
