"""Extra checks: races and conflicts. Shown after the six, never counted in them.

Driven like the six: requests to the tree's host, inputs from the run's seed.
"""

from __future__ import annotations

from labs.lesson.states import RunStatus
from labs.term.i18n import N_, _

from .context import CheckContext, expect, record
from .definition import ExtraCheck
from .errors import CheckFailedError
from .hints import Hint

THREADS = 16


def concurrent_duplicates(ctx: CheckContext) -> None:
    """16 threads post the same message at once: one run, one runId for all."""
    session_id, client_id, text = ctx.new_session(), ctx.token("burst"), ctx.text()
    body = {"sessionId": session_id, "message": text, "clientMessageId": client_id}
    answers = ctx.burst(THREADS, "http", method="POST", path="/chat", body=body)
    run_ids = {record(record(a.get("value")).get("json")).get("runId") for a in answers}
    expect(
        len(answers) == THREADS and len(run_ids) == 1 and None not in run_ids,
        _("one runId across {n} requests").format(n=THREADS),
        _("{count} different answers").format(count=len(run_ids)),
        ctx.schema_or("infra/memory.py", 3),
    )
    rows = ctx.rows_with_key(ctx.key(session_id, client_id, text))
    expect(
        rows == 1,
        _("one row in runs"),
        _("{rows} rows").format(rows=rows),
        ctx.schema_or("infra/memory.py", 3),
    )


def concurrent_claims(ctx: CheckContext) -> None:
    """Two workers claim the same pending run at once: exactly one wins."""
    run = ctx.new_run()
    answers = ctx.burst(
        2,
        "store",
        method="transition",
        args=[run["id"], RunStatus.PENDING, RunStatus.RUNNING],
        actor="worker",
    )
    wins = sum(1 for a in answers if a.get("ok"))
    losers = {record(a.get("error")).get("type") for a in answers if not a.get("ok")}
    expect(
        wins == 1 and losers <= {"TransitionConflictError"},
        _("exactly one of two claims to win, the other refused with TransitionConflictError"),
        _("{wins} claims won").format(wins=wins)
        + (
            _(", refused with {errors}").format(errors=", ".join(map(str, losers)))
            if losers
            else ""
        ),
    )


def reused_client_message_id(ctx: CheckContext) -> None:
    """The same clientMessageId with a different message is a client bug: 409."""
    session_id, client_id = ctx.new_session(), ctx.token("reused")
    one, two = ctx.text(), ctx.text()
    first = ctx.post(
        "/chat", {"sessionId": session_id, "message": one, "clientMessageId": client_id}
    )
    second = ctx.post(
        "/chat", {"sessionId": session_id, "message": two, "clientMessageId": client_id}
    )
    if first.status != 202:
        raise CheckFailedError(_("202 for the first message"), first.shown())
    expect(
        second.status == 409,
        _("409 for a reused clientMessageId with another message"),
        second.shown(),
        key_or_store_hint(ctx, session_id, client_id, one),
    )


def retry_without_client_id(ctx: CheckContext) -> None:
    """Without a clientMessageId, the same text twice within the time bucket is one run."""
    session_id = ctx.new_session()
    body = {"sessionId": session_id, "message": ctx.text()}
    for _attempt in range(2):  # a second try only if a bucket boundary fell in between
        before = ctx.key(session_id, None, body["message"])
        first, second = (
            ctx.post("/chat", body).field("runId"),
            ctx.post("/chat", body).field("runId"),
        )
        if ctx.key(session_id, None, body["message"]) == before:
            break
    expect(
        first is not None and first == second,
        _("the same runId for the same text sent twice without a clientMessageId"),
        _("{first} then {second}").format(first=first, second=second),
        key_or_store_hint(ctx, session_id, None, body["message"]),
    )


def key_or_store_hint(
    ctx: CheckContext, session_id: str, client_message_id: str | None, message: str
) -> Hint:
    """Point at the key when it is not stable, else at the unique check that must use it."""
    stable = ctx.key(session_id, client_message_id, message) == ctx.key(
        session_id, client_message_id, message
    )
    return ctx.hint("shared/keys.py", 3) if not stable else ctx.schema_or("infra/memory.py", 3)


EXTRA_CHECKS = [
    ExtraCheck(
        "concurrent-duplicates",
        N_("concurrent duplicates through the gateway give one run"),
        concurrent_duplicates,
        "infra/memory.py",
    ),
    ExtraCheck(
        "concurrent-claims",
        N_("two concurrent claims of one pending run: one wins"),
        concurrent_claims,
        "infra/memory.py",
    ),
    ExtraCheck(
        "retry-without-client-id",
        N_("the same text twice without a clientMessageId gives one run"),
        retry_without_client_id,
        "shared/keys.py",
    ),
    ExtraCheck(
        "reused-client-id",
        N_("a clientMessageId reused with another message gets 409"),
        reused_client_message_id,
        "gateway/routes.py",
    ),
]
