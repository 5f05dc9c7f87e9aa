"""The libraries every tree imports (Flask, SQLModel and theirs), imported ahead of the tree.

A host imports them before its tree, with the collector paused (host.py), and a
driver that forks more hosts imports them once itself, so those start warm
(launch.py).
"""

from __future__ import annotations

import contextlib
import importlib

from .protocol import HostStore, StoreKind

NAMES = ("flask", "flask.testing", "pydantic", "sqlalchemy", "sqlmodel")
POSTGRES_NAMES = ("sqlalchemy.dialects.postgresql", "psycopg2")


def preimport_libraries(store: HostStore = StoreKind.MEMORY) -> None:
    """Import what every tree imports on this store, never the tree; one that is missing is
    left for the tree's own import to report, at the line of the tree that needs it."""
    for name in NAMES + (POSTGRES_NAMES if store == StoreKind.POSTGRES else ()):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
