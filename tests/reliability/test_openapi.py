"""The gateway's OpenAPI description: served, and covering every route the app registers."""

from __future__ import annotations

import importlib
import re

import pytest

TREES = ["starter", "solution"]


def described_app(tree: str):  # type: ignore[no-untyped-def]
    """The tree's gateway over an empty MemoryStore."""
    store = importlib.import_module(f"{tree}.infra").MemoryStore()
    return importlib.import_module(f"{tree}.gateway").create_app(store)


@pytest.mark.parametrize("tree", TREES)
def test_every_registered_route_and_method_is_described(tree: str) -> None:
    """Each URL rule and each of its methods appears in /openapi.json, and nothing more."""
    app = described_app(tree)
    document = app.test_client().get("/openapi.json").get_json()
    registered = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in app.url_map.iter_rules()
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}
    }
    described = {(path, method) for path, item in document["paths"].items() for method in item}
    assert registered == described


@pytest.mark.parametrize("tree", TREES)
def test_every_schema_reference_in_the_description_resolves(tree: str) -> None:
    """No $ref points at a schema the document does not define."""
    document = described_app(tree).test_client().get("/openapi.json").get_json()
    text = str(document)
    references = set(re.findall(r"#/components/schemas/(\w+)", text))
    assert references and references <= set(document["components"]["schemas"])


def test_the_described_chat_limits_match_what_the_gateway_enforces() -> None:
    """The maxLength the description promises is the one the gateway refuses beyond."""
    app = described_app("solution")
    client = app.test_client()
    document = client.get("/openapi.json").get_json()
    limit = document["components"]["schemas"]["Chat"]["properties"]["clientMessageId"]["maxLength"]
    session_id = client.post("/sessions", json={"userId": "ada"}).get_json()["sessionId"]
    at_limit = client.post(
        "/chat", json={"sessionId": session_id, "message": "hi", "clientMessageId": "c" * limit}
    )
    beyond = client.post(
        "/chat",
        json={"sessionId": session_id, "message": "hi", "clientMessageId": "c" * (limit + 1)},
    )
    assert (at_limit.status_code, beyond.status_code) == (202, 400)
    assert beyond.get_json()["field"] == "clientMessageId"
