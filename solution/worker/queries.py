"""The worker's read-only view of the work waiting for it."""

from ..infra.store import Store
from ..shared.schema import Run


def pending_runs(store: Store, limit: int = 100) -> list[Run]:
    """Return the runs the gateway persisted and no worker has taken, oldest first."""
    return store.pending_runs(limit)
