"""Fixtures for the core tests: a gateway over a fresh in-memory store, per tree, and the
lab's language put back after a test chose one."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from flask.testing import FlaskClient

from labs.term import i18n


@dataclass
class Gateway:
    """A tree's gateway app, its store and a test client."""

    tree: str
    store: Any
    client: FlaskClient

    def new_session(self) -> str:
        """Open a session through the API and return its id."""
        answer = self.client.post("/sessions", json={"userId": "ada"})
        assert answer.status_code == 201
        return str(answer.get_json()["sessionId"])


@pytest.fixture(params=["starter", "solution"])
def gateway(request: pytest.FixtureRequest) -> Gateway:
    """The gateway of each tree over an empty MemoryStore."""
    tree = request.param
    store = importlib.import_module(f"{tree}.infra").MemoryStore()
    app = importlib.import_module(f"{tree}.gateway").create_app(store)
    return Gateway(tree, store, app.test_client())


@pytest.fixture
def solution_gateway() -> Gateway:
    """The solution's gateway over an empty MemoryStore."""
    store = importlib.import_module("solution.infra").MemoryStore()
    app = importlib.import_module("solution.gateway").create_app(store)
    return Gateway("solution", store, app.test_client())


@pytest.fixture
def speak(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Let a test choose the lab's language (i18n.use, --lang); English again afterwards,
    LAB_LANG restored."""
    monkeypatch.setenv("LAB_LANG", i18n.ENGLISH)
    yield
    i18n.use(i18n.ENGLISH)
