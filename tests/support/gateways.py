"""A tree's gateway in this process: its app over a store, and a test client to ask it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask.testing import FlaskClient


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
