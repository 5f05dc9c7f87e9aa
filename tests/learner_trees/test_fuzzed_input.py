"""Malformed and hostile requests: never a 500, never a partial row.

Hypothesis generates most of them; the oversized chunked bodies and the deep
nesting are sent on purpose, to both trees, and over real server sockets too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import import_module
from urllib.parse import quote

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from solution.gateway import create_app
from solution.gateway.requests import MAX_BODY_BYTES
from solution.infra import make_store
from solution.infra.memory import MemoryStore
from solution.infra.store import Store
from tests.learner_trees.test_openapi import document
from tests.support.databases import scalar
from tests.support.servers import DevServer, chunked, deployed_gateway, exchange, request


@dataclass
class Target:
    """A gateway over a store, and a way to count the rows that store holds."""

    client: FlaskClient
    store: Store
    count_rows: Callable[[], tuple[int, int]]  # (sessions, runs)
    session_id: str


@pytest.fixture(params=["memory", "postgres"])
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The solution's gateway over a MemoryStore, or over a SqlStore on migrated tables."""
    if request.param == "memory":
        memory = MemoryStore()

        def count_memory() -> tuple[int, int]:
            return len(memory._sessions), len(memory._runs)

        store: Store = memory
        counter = count_memory
    else:
        url = request.getfixturevalue("migrated_database")
        store = make_store({"DATABASE_URL": url, "DB_SCHEMA": "solution"})

        def count_postgres() -> tuple[int, int]:
            return (
                scalar(url, "SELECT count(*) FROM solution.sessions"),
                scalar(url, "SELECT count(*) FROM solution.runs"),
            )

        counter = count_postgres
    session_id = store.create_session("ada", "fuzz").id
    yield Target(create_app(store).test_client(), store, counter, session_id)
    close = getattr(store, "close", None)
    if close is not None:
        close()


SEND = settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
FIELDS = ["sessionId", "message", "clientMessageId", "userId", "title"]
hostile_text = (
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "\ud800",
            "a" * 70_000,
            "'; DROP TABLE runs;--",
            "<script>",
            "\u202e",
            "null",
        ]
    )
    | st.text()
)
field_value = json_values | hostile_text
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data",
    "",
    "json",
]
header_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@st.composite
def bodies(draw: st.DrawFn, session_id: str) -> bytes:
    """Raw bytes, broken JSON, or a JSON object with the right names and wrong values."""
    kind = draw(st.sampled_from(["bytes", "json", "object"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    names = draw(st.lists(st.sampled_from(FIELDS) | st.text(max_size=5), max_size=5))
    body = {name: draw(field_value) for name in names}
    if draw(st.booleans()):
        body["sessionId"] = draw(st.sampled_from([session_id, session_id + " ", "missing"]))
    return json.dumps(body).encode("utf-8", "surrogatepass")


def assert_json_error_or_success(status: int, payload: object) -> None:
    """Every answer is JSON; below 500; an error names itself and says what went wrong."""
    assert status < 500, payload
    assert isinstance(payload, dict), payload
    if status >= 400:
        assert isinstance(payload.get("error"), str) and isinstance(payload.get("message"), str)


@given(data=st.data())
@SEND
def test_hostile_posts_get_a_json_4xx_and_leave_no_partial_rows(
    target: Target, data: st.DataObject
) -> None:
    """Random bodies, content types and headers: a JSON answer under 500, rows only for 2xx."""
    path = data.draw(st.sampled_from(["/chat", "/sessions"]))
    body = data.draw(bodies(target.session_id))
    headers = {"Content-Type": data.draw(st.sampled_from(CONTENT_TYPES))}
    headers |= data.draw(
        st.dictionaries(st.sampled_from(["X-Junk", "Accept", "Origin"]), header_text, max_size=2)
    )
    before = target.count_rows()
    answer = target.client.post(path, data=body, headers=headers)
    assert_json_error_or_success(answer.status_code, answer.get_json(silent=True))
    sessions, runs = target.count_rows()
    created = (
        answer.status_code in (201, 202) and answer.headers.get("Idempotent-Replayed") != "true"
    )
    expected = (
        before[0] + (path == "/sessions" and created),
        before[1] + (path == "/chat" and created),
    )
    assert (sessions, runs) == expected, f"{answer.status_code}: rows {before} -> {expected}"


DESCRIBED_PATHS = [path.replace("{run_id}", "X") for path in document()["paths"]]


@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from([*DESCRIBED_PATHS, "/runs/", "/nope", "/chat/x"]),
    run_id=st.text(max_size=300),
)
@example(method="GET", path="/runs/X", run_id="\x00")  # Postgres text cannot hold NUL
@example(method="GET", path="/runs/X", run_id="a\x00b")
@example(method="GET", path="/runs/X", run_id="r" * 300)
@SEND
def test_any_method_path_and_run_id_gets_a_json_answer(
    target: Target, method: str, path: str, run_id: str
) -> None:
    """Unknown routes, wrong methods and odd run ids are answered in JSON, never with a 500."""
    url = path.replace("/X", "/" + quote(run_id, safe="")) if path.startswith("/runs/") else path
    before = target.count_rows()
    with target.client.open(url, method=method) as answer:  # /openapi.json streams a file
        assert_json_error_or_success(answer.status_code, answer.get_json(silent=True))
    if method != "POST":
        assert target.count_rows() == before


TREES = ["starter", "solution"]


def gateway_client(tree: str) -> FlaskClient:
    """A tree's gateway over a fresh MemoryStore, through Flask's test client."""
    store = import_module(f"{tree}.infra").MemoryStore()
    return import_module(f"{tree}.gateway").create_app(store).test_client()  # type: ignore[no-any-return]


def nested(depth: int, closed: bool = True) -> bytes:
    """depth arrays inside one another, closed or left open."""
    return b"[" * depth + (b"]" * depth if closed else b"")


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize("path", ["/chat", "/sessions"])
@pytest.mark.parametrize(
    "body",
    [
        nested(30_000, closed=False),
        nested(30_000),
        nested(sys.getrecursionlimit()),
        b'{"message": ' + nested(sys.getrecursionlimit()) + b"}",
        b'{"a": {"b": ' * 5_000,
    ],
    ids=["30000-open", "30000-closed", "recursion-limit-arrays", "in-an-object", "objects"],
)
def test_nesting_deeper_than_the_parser_reaches_is_a_400_that_names_the_problem(
    tree: str, path: str, body: bytes
) -> None:
    """As deep as Python's recursion limit, or deeper: 400 too_deep, never a RecursionError 500."""
    answer = gateway_client(tree).post(path, data=body, content_type="application/json")
    assert answer.status_code == 400, answer.get_data(as_text=True)
    assert answer.get_json()["error"] == "too_deep"
    assert "nests too deeply" in answer.get_json()["message"]


@pytest.mark.parametrize("tree", TREES)
def test_moderate_nesting_and_brackets_inside_strings_are_judged_as_usual(
    tree: str,
) -> None:
    """32 levels is an ordinary field error; brackets inside a string are just text."""
    client = gateway_client(tree)
    session_id = client.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    within = b'{"sessionId": "%s", "message": %s}' % (
        session_id.encode(),
        nested(32),
    )
    answer = client.post("/chat", data=within, content_type="application/json")
    assert (answer.status_code, answer.get_json()["error"]) == (400, "invalid_field")
    text = '[[[{{{"\\"' * 5_000
    answer = client.post("/chat", json={"sessionId": session_id, "message": text})
    assert answer.status_code == 202, answer.get_data(as_text=True)


def sized_chat(size: int, session_id: str, client_message_id: str) -> bytes:
    """A valid POST /chat body of exactly size bytes (the message pads it)."""
    body = {"sessionId": session_id, "clientMessageId": client_message_id, "message": ""}
    body["message"] = "a" * (size - len(json.dumps(body).encode()))
    raw = json.dumps(body).encode()
    assert len(raw) == size
    return raw


@pytest.fixture(
    scope="module",
    params=[(tree, kind) for tree in TREES for kind in ("gunicorn", "devserver")],
    ids=lambda p: "-".join(p),
)
def live_port(request: pytest.FixtureRequest) -> Iterator[int]:
    """The port of a tree's gateway on MOCK=1, under gunicorn or Flask's development server."""
    tree, kind = request.param
    with deployed_gateway(tree) if kind == "gunicorn" else DevServer(tree) as server:
        yield server.port


@pytest.mark.parametrize(
    ("size", "status"),
    [(MAX_BODY_BYTES, 202), (MAX_BODY_BYTES + 1, 413), (3 * MAX_BODY_BYTES, 413)],
)
def test_a_chunked_body_over_the_limit_is_refused_whole_by_a_real_server(
    live_port: int, size: int, status: int
) -> None:
    """Chunked, over a socket: at the limit 202; one byte over it 413, nothing stored."""
    created = request(live_port, "POST", "/sessions", json.dumps({"userId": "ada"}).encode())
    session_id = json.loads(created.body)["sessionId"]
    client_message_id = f"chunked-{size}"
    body = sized_chat(size, session_id, client_message_id)
    answer = exchange(live_port, chunked("POST", "/chat", body))
    assert answer.status == status, answer.body[:300]
    assert json.loads(answer.body)["error" if status == 413 else "status"] in (
        "request_entity_too_large",
        "pending",
    )
    if status == 413:  # nothing was kept: the id is free for another message, not a 409
        again = json.dumps(
            {"sessionId": session_id, "clientMessageId": client_message_id, "message": "short"}
        ).encode()
        retry = request(live_port, "POST", "/chat", again)
        assert (retry.status, retry.headers["idempotent-replayed"]) == (202, "false")


def test_thirty_thousand_open_brackets_over_a_socket_are_a_400(live_port: int) -> None:
    """The nesting limit holds on a real server too, chunked or sized."""
    sized = request(live_port, "POST", "/chat", nested(30_000, closed=False))
    streamed = exchange(live_port, chunked("POST", "/chat", nested(30_000, closed=False)))
    for answer in (sized, streamed):
        assert (answer.status, json.loads(answer.body)["error"]) == (400, "too_deep")
