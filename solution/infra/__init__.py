"""Where state lives: the Store protocol and the stores that satisfy it."""

from .factory import make_store
from .memory import MemoryStore
from .store import RunCreated, Store

__all__ = ["MemoryStore", "RunCreated", "Store", "make_store"]
