"""idempotency_key_for: derived from content, never from chance."""

from __future__ import annotations

from solution.shared.keys import TIME_BUCKET_SECONDS, idempotency_key_for

NOON = 1_700_000_000.0 - (1_700_000_000.0 % TIME_BUCKET_SECONDS)


def test_the_same_request_gives_the_same_key() -> None:
    """A retry of the same client message id maps to the same key."""
    assert idempotency_key_for("s1", "c1", "hello") == idempotency_key_for("s1", "c1", "hello")


def test_the_key_is_a_sha256_hex_digest() -> None:
    """Keys are 64 hex characters, whatever the input's length."""
    key = idempotency_key_for("s1", "c1", "x" * 10_000)
    assert len(key) == 64 and set(key) <= set("0123456789abcdef")


def test_a_client_message_id_is_scoped_to_its_session() -> None:
    """Two sessions may use the same client message id without colliding."""
    assert idempotency_key_for("s1", "c1", "hi") != idempotency_key_for("s2", "c1", "hi")


def test_with_a_client_message_id_the_text_does_not_change_the_key() -> None:
    """The id alone names the request; a changed text is the gateway's 409, not a new run."""
    assert idempotency_key_for("s1", "c1", "one") == idempotency_key_for("s1", "c1", "two")


def test_without_a_client_message_id_identical_text_in_one_bucket_shares_a_key() -> None:
    """A double click inside the time bucket is recognised as a retry."""
    first = idempotency_key_for("s1", None, "hello", now=NOON + 1)
    second = idempotency_key_for("s1", None, "hello", now=NOON + TIME_BUCKET_SECONDS - 1)
    assert first == second


def test_without_a_client_message_id_the_next_bucket_is_a_new_request() -> None:
    """The same words said again later start a new run."""
    first = idempotency_key_for("s1", None, "hello", now=NOON + 1)
    later = idempotency_key_for("s1", None, "hello", now=NOON + TIME_BUCKET_SECONDS + 1)
    assert first != later


def test_without_a_client_message_id_different_text_gives_different_keys() -> None:
    """Two different messages in one bucket are two requests."""
    assert idempotency_key_for("s1", None, "a", now=NOON) != idempotency_key_for(
        "s1", None, "b", now=NOON
    )


def test_a_client_message_id_cannot_pose_as_a_message_without_one() -> None:
    """The two forms are tagged apart: no clientMessageId can reproduce a text request's key."""
    bucket = int(NOON // TIME_BUCKET_SECONDS)
    by_text = idempotency_key_for("s1", None, "hello", now=NOON)
    for posing in (f"{bucket}\x1fhello", f"hello\x1f{bucket}", "hello"):
        assert idempotency_key_for("s1", posing, "hello", now=NOON) != by_text


def test_the_starter_as_shipped_changes_the_key_on_every_call() -> None:
    """The starter's clock-based key is what check 3 exists to catch."""
    from starter.shared.keys import idempotency_key_for as starter_key

    assert starter_key("s1", "c1", "hello") != starter_key("s1", "c1", "hello")
