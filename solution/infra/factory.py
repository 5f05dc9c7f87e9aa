"""Choose the store from the environment: MOCK=1 or DATABASE_URL."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..shared.errors import StoreConfigError
from ..shared.say import _
from .memory import MemoryStore
from .store import Store

# Each tree keeps its tables in a Postgres schema named after the tree.
DEFAULT_SCHEMA = __name__.partition(".")[0]


def make_store(environ: Mapping[str, str] | None = None) -> Store:
    """Return MemoryStore under MOCK=1, SqlStore when DATABASE_URL is set."""
    env = os.environ if environ is None else environ
    if env.get("MOCK") == "1":
        return MemoryStore()
    url = env.get("DATABASE_URL")
    if url:
        from .sql import SqlStore  # imported late: MOCK=1 never loads the driver

        return SqlStore(url, schema=env.get("DB_SCHEMA") or DEFAULT_SCHEMA)
    # Said to a person at a terminal (the seed script, the worker), so in their language.
    raise StoreConfigError(
        _(
            "no store configured: set MOCK=1 for the in-memory store, "
            "or DATABASE_URL=postgresql://user:password@host:port/db for Postgres"
        )
    )
