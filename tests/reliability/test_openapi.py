"""The gateway's OpenAPI description, kept in the kit: every route a tree registers, its limits."""

from __future__ import annotations

import importlib
import re

import pytest

from labs.lesson.openapi import openapi_document

TREES = ["starter", "solution"]


def described_app(tree: str):  # type: ignore[no-untyped-def]
    """The tree's gateway over an empty MemoryStore."""
    store = importlib.import_module(f"{tree}.infra").MemoryStore()
    return importlib.import_module(f"{tree}.gateway").create_app(store)


def chat_property(name: str) -> dict[str, object]:
    """The description of one field of the POST /chat body."""
    schemas = openapi_document()["components"]["schemas"]  # type: ignore[index]
    return schemas["Chat"]["properties"][name]  # type: ignore[no-any-return]


@pytest.mark.parametrize("tree", TREES)
def test_every_registered_route_and_method_is_described(tree: str) -> None:
    """Each URL rule and each of its methods appears in the document, and nothing more."""
    app = described_app(tree)
    registered = {
        (re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule), method.lower())
        for rule in app.url_map.iter_rules()
        for method in (rule.methods or set()) - {"HEAD", "OPTIONS"}
    }
    paths = openapi_document()["paths"]
    described = {(path, method) for path, item in paths.items() for method in item}  # type: ignore[attr-defined]
    assert registered == described


def test_every_schema_reference_in_the_description_resolves() -> None:
    """No $ref points at a schema the document does not define."""
    document = openapi_document()
    references = set(re.findall(r"#/components/schemas/(\w+)", str(document)))
    assert references and references <= set(document["components"]["schemas"])  # type: ignore[index]


@pytest.mark.parametrize("tree", TREES)
def test_the_described_chat_limits_are_the_ones_the_gateway_enforces(tree: str) -> None:
    """A clientMessageId at its documented maxLength is accepted; one more is a 400 naming it."""
    client = described_app(tree).test_client()
    limit = int(str(chat_property("clientMessageId")["maxLength"]))
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


@pytest.mark.parametrize("tree", TREES)
def test_the_described_body_limit_is_the_one_the_gateway_enforces(tree: str) -> None:
    """The 413 the document promises names the tree's own MAX_BODY_BYTES."""
    limit = importlib.import_module(f"{tree}.gateway.requests").MAX_BODY_BYTES
    answers = openapi_document()["paths"]["/chat"]["post"]["responses"]  # type: ignore[index]
    assert f"larger than {limit} bytes" in answers["413"]["description"]
