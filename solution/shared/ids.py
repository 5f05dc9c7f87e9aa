"""Application-side ids.

The gateway answers with the run id before the row is committed, so the id
must exist before the write. ULIDs sort by creation time, which keeps
primary-key inserts at the right-hand edge of the index.
"""

from __future__ import annotations

from ulid import ULID


def new_id() -> str:
    """Return a new time-ordered id as 26 characters of Crockford base32."""
    return str(ULID())
