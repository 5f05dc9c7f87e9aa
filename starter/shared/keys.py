"""The idempotency key: the same request must always produce the same key."""

import hashlib
import time

# Without a client message id, identical text inside this window counts as a retry.
TIME_BUCKET_SECONDS = 60


def idempotency_key_for(
    session_id: str, client_message_id: str | None, message: str, *, now: float | None = None
) -> str:
    """Derive the run's key from what the client sent, never from chance (a retry must match)."""
    # TODO(check 3): hash session + clientMessageId, or else session + time bucket + message.
    # As shipped, the key hashes the clock, so a retry never matches the first try.
    material = f"{session_id}\x1f{time.time_ns()}"
    # END(check 3)
    return hashlib.sha256(material.encode()).hexdigest()
