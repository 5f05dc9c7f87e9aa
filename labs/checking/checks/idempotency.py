"""Check 3: one run per message, however often and however fast it is sent."""

from __future__ import annotations

import time
from typing import Any

from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record
from ..definition import check
from ..errors import CheckFailedError, RefusedError

BURSTS, BURST_SIZE = 3, 4  # the races: how many, and how many requests in each


@check(
    3,
    N_("idempotency: one run per clientMessageId in a session, even at once"),
    "shared/keys.py",
)
def idempotency(ctx: CheckContext) -> None:
    """The key is stable, per session, blind to time; one row per key, even in a race."""
    keys_hint, store_hint = ctx.hint("shared/keys.py", 3), ctx.schema_or("infra/memory.py", 3)
    mine, theirs = ctx.new_session(), ctx.new_session()
    client_id, other_id, text = ctx.token("c"), ctx.token("c"), ctx.text()
    now = time.time()
    keys = ctx.batch(
        [
            key_call(mine, client_id, text),
            key_call(mine, client_id, text),
            key_call(mine, client_id, text, now),
            key_call(mine, client_id, text, now + 3600),
            key_call(theirs, client_id, text),
            key_call(mine, other_id, text),
        ]
    )
    for reply in keys:
        if isinstance(reply, RefusedError):
            raise CheckFailedError(
                _("idempotency_key_for to return a key"), reply.describe(), keys_hint
            )
    request = {"sessionId": mine, "message": text, "clientMessageId": client_id}
    first, second = ctx.post("/chat", request), ctx.post("/chat", request)
    key, again, at_now, later, theirs_key, other_key = (str(k) for k in keys)
    expect(
        key == again,
        _("idempotency_key_for to return the same key for the same request"),
        _("{first}… then {second}…: the key changes on every call").format(
            first=key[:12], second=again[:12]
        ),
        keys_hint,
    )
    expect(
        later == at_now == key,
        _("the same key an hour later: with a clientMessageId, time plays no part"),
        _("a different key once the clock moved on: a retry after a pause makes a second run"),
        keys_hint,
    )
    expect(
        theirs_key != key,
        _("another key for the same clientMessageId in another session"),
        _("the same key: one session's request would replay another session's run"),
        keys_hint,
    )
    expect(
        other_key != key,
        _("another key for another clientMessageId"),
        _("the same key for {one} and {other}: two messages would share one run").format(
            one=client_id, other=other_id
        ),
        keys_hint,
    )
    run_id = first.field("runId")
    expect(
        first.status == second.status == 202 and run_id is not None,
        _("202 for both requests"),
        _("{first} then {second}").format(first=first.shown(), second=second.shown()),
    )
    expect(
        run_id == second.field("runId"),
        _("the same runId for both requests"),
        _("{first} then {second} (two runs)").format(first=run_id, second=second.field("runId")),
        store_hint,
    )
    rows = ctx.rows_with_key(key)
    expect(
        rows == 1, _("one row in runs for the key"), _("{rows} rows").format(rows=rows), store_hint
    )
    elsewhere = ctx.post("/chat", {**request, "sessionId": theirs}).field("runId")
    expect(
        elsewhere is not None and elsewhere != run_id,
        _("a new run for the same clientMessageId in another session"),
        _("{run}: the other session's run").format(run=elsewhere),
        keys_hint,
    )
    for _race in range(BURSTS):
        one_race(ctx, mine, store_hint)


def key_call(
    session_id: str, client_message_id: str, message: str, now: float | None = None
) -> dict[str, Any]:
    """The request for idempotency_key_for(...), for CheckContext.batch."""
    return {
        "op": "key",
        "session_id": session_id,
        "client_message_id": client_message_id,
        "message": message,
        "now": now,
    }


def one_race(ctx: CheckContext, session_id: str, hint: object) -> None:
    """BURST_SIZE identical requests at once: one run, one row."""
    body = {"sessionId": session_id, "message": ctx.text(), "clientMessageId": ctx.token("c")}
    answers = ctx.burst(BURST_SIZE, "http", method="POST", path="/chat", body=body, quiet=True)
    values = [record(a.get("value")) for a in answers if a.get("ok")]
    statuses = sorted({v.get("status") for v in values}, key=str)
    expect(
        len(values) == BURST_SIZE and statuses == [202],
        _("202 for each of {n} identical requests sent at once").format(n=BURST_SIZE),
        _("statuses {statuses}, {failed} requests failed").format(
            statuses=statuses, failed=BURST_SIZE - len(values)
        ),
    )
    runs = {record(v.get("json")).get("runId") for v in values}
    key = ctx.key(session_id, str(body["clientMessageId"]), str(body["message"]))
    rows = ctx.rows_with_key(key)
    expect(
        len(runs) == 1 and rows == 1,
        _("one run and one row for {n} identical requests sent at once").format(n=BURST_SIZE),
        _(
            "{runs} runIds and {rows} rows: between looking the key up and inserting, another "
            "request got in (look up and insert under one lock, or let the database decide)"
        ).format(runs=len(runs), rows=rows),
        hint,  # type: ignore[arg-type]
    )
