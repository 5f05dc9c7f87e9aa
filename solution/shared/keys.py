"""The idempotency key: the same request must always produce the same key."""

import hashlib
import time

# Without a client message id, identical text inside this window counts as a retry.
TIME_BUCKET_SECONDS = 60


def idempotency_key_for(
    session_id: str, client_message_id: str | None, message: str, *, now: float | None = None
) -> str:
    """Derive the run's key from what the client sent, never from chance (a retry must match)."""
    # SOLUTION(check 3): hash session + clientMessageId, or else session + time bucket + message.
    # The tags keep the two forms apart, and the free text comes last, so no
    # choice of text can make one request's material equal another's.
    if client_message_id is not None:
        material = f"client\x1f{session_id}\x1f{client_message_id}"
    else:
        moment = time.time() if now is None else now
        bucket = int(moment // TIME_BUCKET_SECONDS)
        material = f"text\x1f{session_id}\x1f{bucket}\x1f{message}"
    # END(check 3)
    return hashlib.sha256(material.encode()).hexdigest()
