"""Where state lives: the Store protocol, the stores that satisfy it, and make_store."""

import os
from collections.abc import Mapping

from ..shared import errors
from .memory import MemoryStore
from .store import Store


def make_store(environ: Mapping[str, str] | None = None) -> Store:
    """MemoryStore under MOCK=1, else SqlStore on DATABASE_URL, in schema DB_SCHEMA if set."""
    env = os.environ if environ is None else environ
    if env.get("MOCK") == "1":
        return MemoryStore()
    if env.get("DATABASE_URL"):
        from .sql import SqlStore  # imported late: MOCK=1 never loads the driver

        return SqlStore(env["DATABASE_URL"], schema=env.get("DB_SCHEMA"))
    raise errors.StoreConfigError(
        "no store configured: set MOCK=1 for the in-memory store, "
        "or DATABASE_URL=postgresql://user:password@host:port/db for Postgres"
    )
