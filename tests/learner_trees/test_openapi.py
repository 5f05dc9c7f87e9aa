"""The gateway's OpenAPI document, gateway/openapi.json in each tree: served, complete and true.

The first tests read the file and ask each tree's gateway in-process; the last ones
serve the solution as production does (gunicorn, deploy/gunicorn.conf.py) on Postgres,
load the document from its /openapi.json and let schemathesis send it valid and
invalid requests: every answer must be one the document gives.
"""

from __future__ import annotations

import importlib
import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.generation.modes import GenerationMode

from labs.pg.cluster import Autocommit, TempCluster
from labs.trees.finding import REPO_ROOT
from tests.support.pgcluster import drop_database_of
from tests.support.servers import deployed_gateway

TREES = ["starter", "solution"]
# What schemathesis sends: this many examples per operation and mode, drawn the same way
# every run, so a failure here is the document's or the gateway's, never the seed's.
EXAMPLES = 40
TEXT_FIELDS = [
    ("NewSession", "userId"),
    ("NewSession", "title"),
    ("Chat", "sessionId"),
    ("Chat", "message"),
    ("Chat", "clientMessageId"),
]
# Values on each side of the text rule: blank in Python's sense (str.strip) but not in every
# regex dialect's (U+001C), NUL and lone surrogates (Postgres cannot store them), and text.
TEXTS = ["", " ", "\t\n", "\x1c", "\u3000", "a\x00b", "\x00", "\ud800", "x\udfff", "ok", "é 字 🙂"]


def document(tree: str = "solution") -> dict[str, Any]:
    """The tree's OpenAPI document, as the file holds it."""
    path = REPO_ROOT / tree / "gateway" / "openapi.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def described_app(tree: str):  # type: ignore[no-untyped-def]
    """The tree's gateway over an empty MemoryStore."""
    store = importlib.import_module(f"{tree}.infra").MemoryStore()
    return importlib.import_module(f"{tree}.gateway").create_app(store)


def field(schema: str, name: str) -> dict[str, Any]:
    """The document's description of one field of a request body."""
    return document()["components"]["schemas"][schema]["properties"][name]  # type: ignore[no-any-return]


def valid_by_document(schema: str, name: str, value: str) -> bool:
    """Whether the document allows value in this field: its length bounds and its pattern.

    The pattern is matched with Python's re, as schemathesis generates from it.
    """
    described = field(schema, name)
    length = len(value)
    if length < described.get("minLength", 0) or length > described.get("maxLength", length):
        return False
    parts = [described, *described.get("allOf", [])]
    return all(re.search(part["pattern"], value) for part in parts if "pattern" in part)


@pytest.mark.parametrize("tree", TREES)
def test_the_gateway_serves_its_document(tree: str) -> None:
    """GET /openapi.json answers the file beside the gateway, as JSON, from any directory."""
    with described_app(tree).test_client().get("/openapi.json") as answer:
        assert (answer.status_code, answer.mimetype) == (200, "application/json")
        assert answer.get_json() == document(tree)


@pytest.mark.parametrize("tree", TREES)
def test_every_registered_route_and_method_is_described(tree: str) -> None:
    """Each URL rule and each of its methods appears in the document, and nothing more."""
    app = described_app(tree)
    registered = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in app.url_map.iter_rules()
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}
    }
    paths = document(tree)["paths"]
    described = {(path, method) for path, item in paths.items() for method in item}
    assert registered == described


def test_every_reference_in_the_document_resolves() -> None:
    """No $ref points at a schema or a response the document does not define."""
    components = document()["components"]
    references = re.findall(r"#/components/(\w+)/(\w+)", json.dumps(document()))
    assert references
    assert [ref for ref in references if ref[1] not in components.get(ref[0], {})] == []


def test_every_operation_lists_what_the_server_refuses_before_the_gateway() -> None:
    """414 and 431 come from the server (gunicorn, nginx) whatever the route: each lists them."""
    missing = [
        (path, method, status)
        for path, item in document()["paths"].items()
        for method, operation in item.items()
        for status in ("414", "431")
        if status not in operation["responses"]
    ]
    assert missing == []


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize(("schema", "name"), TEXT_FIELDS)
def test_each_text_field_is_valid_exactly_when_the_gateway_takes_it(
    tree: str, schema: str, name: str
) -> None:
    """Blank, NUL and lone surrogates are refused by the document iff the gateway refuses them."""
    client = described_app(tree).test_client()
    session_id = client.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    path, base = ("/sessions", {"userId": "ada"}) if schema == "NewSession" else ("/chat", {})
    base = base or {"sessionId": session_id, "message": "hi"}
    disagreements = []
    for value in [*TEXTS, "c" * 128, "c" * 129, "t" * 200, "t" * 201]:
        answer = client.post(path, json={**base, name: value})
        refused_for_it = answer.status_code == 400 and answer.get_json().get("field") == name
        unknown_session = name == "sessionId" and answer.status_code == 404
        taken = answer.status_code in (201, 202) or unknown_session
        assert taken or refused_for_it, (value, answer.get_json())
        if taken != valid_by_document(schema, name, value):
            disagreements.append((value[:12], answer.status_code))
    assert disagreements == []


@pytest.mark.parametrize("tree", TREES)
def test_a_message_as_long_as_the_document_allows_is_taken(tree: str) -> None:
    """The message's bound is one a body can reach: its maxLength, or else the 64 KiB body's."""
    limit = importlib.import_module(f"{tree}.gateway.requests").MAX_BODY_BYTES
    client = described_app(tree).test_client()
    session_id = client.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    envelope = len(json.dumps({"sessionId": session_id, "message": ""}))
    longest = field("Chat", "message").get("maxLength", limit - envelope)
    answer = client.post("/chat", json={"sessionId": session_id, "message": "m" * longest})
    assert answer.status_code == 202, f"a message of {longest} characters: {answer.get_json()}"
    assert f"{limit} bytes" in field("Chat", "message")["description"]


@pytest.mark.parametrize("tree", TREES)
def test_the_described_body_limit_is_the_one_the_gateway_enforces(tree: str) -> None:
    """The 413 the document promises names the tree's own MAX_BODY_BYTES."""
    limit = importlib.import_module(f"{tree}.gateway.requests").MAX_BODY_BYTES
    too_large = document(tree)["components"]["responses"]["TooLarge"]
    assert f"larger than {limit} bytes" in too_large["description"]


# The solution served as production serves it, on Postgres, and schemathesis against it.


@pytest.fixture(scope="module")
def served(pg_cluster: TempCluster, migrated_template: str) -> Iterator[str]:
    """The base URL of the solution under gunicorn, on a database of its own."""
    name = f"koda_openapi_{uuid.uuid4().hex[:12]}"
    with Autocommit(pg_cluster.url()) as cursor:
        cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{migrated_template}"')
    env = {"MOCK": "0", "DATABASE_URL": pg_cluster.url(name), "DB_SCHEMA": "solution"}
    try:
        with deployed_gateway("solution", env) as server:
            yield f"http://127.0.0.1:{server.port}"
    finally:
        drop_database_of(pg_cluster, name)


@pytest.fixture(scope="module")
def session_id(served: str) -> str:
    """A session that exists, so that valid chat messages can be taken (202), not only 404."""
    answer = requests.post(f"{served}/sessions", json={"userId": "schemathesis"}, timeout=10)
    return str(answer.json()["sessionId"])


@pytest.fixture(scope="module")
def served_document(served: str) -> schemathesis.schemas.BaseSchema:
    """The document as the server hands it out, set to draw a bounded, repeatable sample."""
    schema = schemathesis.openapi.from_url(f"{served}/openapi.json")
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
        max_examples=EXAMPLES,
        deterministic=True,
        database="none",
        # Some strings schemathesis draws from a pool shared between fields, past a field's
        # pattern, so NUL would be sent as valid; the NUL rule is checked on its own above.
        allow_x00=False,
    )
    return schema


served_schema = schemathesis.pytest.from_fixture("served_document")


@pytest.mark.postgres
@served_schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_served_gateway_answers_as_its_document_says(case: Any, session_id: str) -> None:
    """Status, content type, headers and body of every answer are the document's."""
    body = case.body
    valid = case.meta is None or case.meta.generation.mode == GenerationMode.POSITIVE
    if valid and case.operation.path == "/chat" and isinstance(body, dict) and "sessionId" in body:
        body["sessionId"] = session_id  # a real session, so the 202 path is walked too
    case.call_and_validate()


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("status", "headers", "path"),
    [
        ("414", {}, "/healthz?" + "q" * 5000),
        ("431", {f"X-Field-{n}": "v" for n in range(5000)}, "/healthz"),
    ],
)
def test_the_servers_own_refusals_are_the_documents(
    served: str, served_document: Any, status: str, headers: dict[str, str], path: str
) -> None:
    """A URL or a header block too large for gunicorn is answered as the document says."""
    answer = requests.get(served + path, headers=headers, timeout=10)
    assert str(answer.status_code) == status
    assert status in document()["paths"]["/healthz"]["get"]["responses"]
    served_document["/healthz"]["GET"].validate_response(answer)


@pytest.mark.postgres
def test_a_run_and_a_replay_are_answered_as_the_document_says(
    served: str, served_document: Any, session_id: str
) -> None:
    """The 202, its replay and GET of the run: statuses, headers and bodies the document gives."""
    chat = {"sessionId": session_id, "message": "describe me", "clientMessageId": "doc-1"}
    first = requests.post(f"{served}/chat", json=chat, timeout=10)
    replay = requests.post(f"{served}/chat", json=chat, timeout=10)
    run = requests.get(served + first.headers["Location"], timeout=10)
    assert (first.status_code, replay.status_code, run.status_code) == (202, 202, 200)
    assert [first.headers["Idempotent-Replayed"], replay.headers["Idempotent-Replayed"]] == [
        "false",
        "true",
    ]
    for answer, path, method in [(first, "/chat", "POST"), (replay, "/chat", "POST")]:
        served_document[path][method].validate_response(answer)
    served_document["/runs/{run_id}"]["GET"].validate_response(run)
