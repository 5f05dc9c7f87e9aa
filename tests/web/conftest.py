"""Fixtures for the dashboard: an app per test, its test client, and a tree copy to break."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from labs.trees import REPO_ROOT
from web import create_app

# A pace the eye cannot follow but the threads can: the demo executor in tests.
FAST = {"TESTING": True, "DEMO_PACE": 0.01, "CHECK_TIMEOUT": 60.0, "DATABASE_URL": None}


def make_app(**overrides: Any) -> Iterator[Flask]:
    """Yield a dashboard app and stop its demo executors afterwards."""
    app = create_app({**FAST, **overrides})
    try:
        yield app
    finally:
        app.extensions["mini_koda_lab"].close()


@pytest.fixture
def app() -> Iterator[Flask]:
    """A dashboard on the memory store, with StrictUndefined templates."""
    yield from make_app()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A test client for the dashboard."""
    return app.test_client()


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A private copy of the starter tree that a test may edit or break."""
    target = tmp_path / "learner"
    shutil.copytree(REPO_ROOT / "starter", target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return target
