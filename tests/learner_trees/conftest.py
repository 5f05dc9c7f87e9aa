"""Fixtures for the tests of the learners' trees: a gateway over a fresh in-memory store, per
tree, and two real gateway servers sharing one database."""

from __future__ import annotations

import importlib
from collections.abc import Iterator

import pytest

from labs.bench.server import GatewayServer
from tests.support.gateways import Gateway
from tests.support.servers import GATEWAY


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
def gateway_pair(migrated_database: str) -> Iterator[tuple[GatewayServer, GatewayServer]]:
    """Two gunicorn gateway processes on two loopback ports, sharing one database."""
    env = {"DATABASE_URL": migrated_database, "DB_SCHEMA": "solution"}
    first = GatewayServer(GATEWAY, env, workers=2, threads=8)
    second = GatewayServer(GATEWAY, env, workers=2, threads=8)
    with first, second:
        yield first, second
