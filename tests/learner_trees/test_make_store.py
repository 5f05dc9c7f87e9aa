"""make_store picks the store from the environment, or says how to pick one."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_mock_1_gives_the_memory_store(tree: str) -> None:
    """MOCK=1 wins, even when DATABASE_URL is also set."""
    infra = importlib.import_module(f"{tree}.infra")
    store = infra.make_store({"MOCK": "1", "DATABASE_URL": "postgresql://x@127.0.0.1:1/x"})
    assert isinstance(store, infra.MemoryStore)


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_without_mock_or_database_url_the_error_names_both(tree: str) -> None:
    """A learner who forgot both is told the two ways forward."""
    infra = importlib.import_module(f"{tree}.infra")
    errors = importlib.import_module(f"{tree}.shared.errors")
    with pytest.raises(errors.StoreConfigError, match=r"MOCK=1.*DATABASE_URL"):
        infra.make_store({})
