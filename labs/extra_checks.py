"""Extra checks: races and conflicts. Shown after the six, never counted in them."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .checks import CheckContext, CheckFailed, expect
from .hints import Hint

THREADS = 16


@dataclass(frozen=True)
class ExtraCheck:
    """A labelled extra check."""

    key: str
    title: str
    run: Callable[[CheckContext], None]
    default_hint: str


def concurrent_duplicates(ctx: CheckContext) -> None:
    """16 threads post the same message at once: one run, one runId for all."""
    session_id = ctx.new_session()
    body = {"sessionId": session_id, "message": "double click", "clientMessageId": "burst-1"}
    start = threading.Barrier(THREADS)

    def post(_: int) -> str | None:
        start.wait()
        answer = ctx.client.post("/chat", body)
        return (answer.get_json(silent=True) or {}).get("runId")

    with ThreadPoolExecutor(THREADS) as pool:
        run_ids = set(pool.map(post, range(THREADS)))
    expect(
        len(run_ids) == 1 and None not in run_ids,
        f"one runId across {THREADS} requests",
        f"{len(run_ids)} different answers",
        ctx.schema_or("infra/memory.py", 3),
    )
    key = ctx.tree.module("shared.keys").idempotency_key_for(session_id, "burst-1", "double click")
    rows = ctx.raw.count_runs_with_key(key)
    expect(rows == 1, "one row in runs", f"{rows} rows", ctx.schema_or("infra/memory.py", 3))


def concurrent_claims(ctx: CheckContext) -> None:
    """Two workers claim the same pending run at once: exactly one wins."""
    pending, running = ctx.status("PENDING"), ctx.status("RUNNING")
    run = ctx.new_run("claim me")
    conflict = ctx.error("TransitionConflictError")
    start = threading.Barrier(2)

    def claim(_: int) -> bool:
        start.wait()
        with ctx.trace.acting_as("worker"):
            try:
                ctx.store.transition(run.id, pending, running)
            except conflict:
                return False
        return True

    with ThreadPoolExecutor(2) as pool:
        wins = sum(pool.map(claim, range(2)))
    expect(wins == 1, "exactly one of two claims to win", f"{wins} claims won")


def reused_client_message_id(ctx: CheckContext) -> None:
    """The same clientMessageId with a different message is a client bug: 409."""
    session_id = ctx.new_session()
    first = ctx.client.post(
        "/chat", {"sessionId": session_id, "message": "one", "clientMessageId": "reused"}
    )
    second = ctx.client.post(
        "/chat", {"sessionId": session_id, "message": "two", "clientMessageId": "reused"}
    )
    if first.status_code != 202:
        raise CheckFailed("202 for the first message", str(first.status_code))
    expect(
        second.status_code == 409,
        "409 for a reused clientMessageId with another message",
        f"{second.status_code} {second.get_data(as_text=True).strip()}",
        key_or_store_hint(ctx, session_id, "reused", "one"),
    )


def retry_without_client_id(ctx: CheckContext) -> None:
    """Without a clientMessageId, the same text twice within the time bucket is one run."""
    session_id = ctx.new_session()
    body = {"sessionId": session_id, "message": "no id this time"}
    keys = ctx.tree.module("shared.keys")
    for _attempt in range(2):  # a second try only if a bucket boundary fell in between
        before = keys.idempotency_key_for(session_id, None, body["message"])
        first = (ctx.client.post("/chat", body).get_json(silent=True) or {}).get("runId")
        second = (ctx.client.post("/chat", body).get_json(silent=True) or {}).get("runId")
        if keys.idempotency_key_for(session_id, None, body["message"]) == before:
            break
    expect(
        first is not None and first == second,
        "the same runId for the same text sent twice without a clientMessageId",
        f"{first} then {second}",
        key_or_store_hint(ctx, session_id, None, body["message"]),
    )


def key_or_store_hint(
    ctx: CheckContext, session_id: str, client_message_id: str | None, message: str
) -> Hint:
    """Point at the key when it is not stable, else at the unique check that must use it."""
    keys = ctx.tree.module("shared.keys")
    stable = keys.idempotency_key_for(session_id, client_message_id, message) == (
        keys.idempotency_key_for(session_id, client_message_id, message)
    )
    return ctx.hint("shared/keys.py", 3) if not stable else ctx.schema_or("infra/memory.py", 3)


EXTRA_CHECKS = [
    ExtraCheck(
        "concurrent-duplicates",
        f"{THREADS} concurrent duplicates through the gateway give one run",
        concurrent_duplicates,
        "infra/memory.py",
    ),
    ExtraCheck(
        "concurrent-claims",
        "two concurrent claims of one pending run: one wins",
        concurrent_claims,
        "infra/memory.py",
    ),
    ExtraCheck(
        "retry-without-client-id",
        "the same text twice without a clientMessageId gives one run",
        retry_without_client_id,
        "shared/keys.py",
    ),
    ExtraCheck(
        "reused-client-id",
        "a clientMessageId reused with another message gets 409",
        reused_client_message_id,
        "gateway/routes.py",
    ),
]
