"""The idempotency key: the same request must always produce the same key."""

from __future__ import annotations

import hashlib
import time

# Without a client message id, identical text inside this window counts as a retry.
TIME_BUCKET_SECONDS = 60


def idempotency_key_for(
    session_id: str,
    client_message_id: str | None,
    message: str,
    *,
    now: float | None = None,
) -> str:
    """Derive the run's idempotency key from what the client sent."""
    # SOLUTION(check 3): derive the key from the request's content, never from chance or the clock.
    if client_message_id is not None:
        material = f"{session_id}\x1f{client_message_id}"
    else:
        moment = time.time() if now is None else now
        bucket = int(moment // TIME_BUCKET_SECONDS)
        material = f"{session_id}\x1f{message}\x1f{bucket}"
    # END(check 3)
    return hashlib.sha256(material.encode()).hexdigest()
