"""Check 3: one run per message, however often and however fast it is sent.

The key is judged on its own in keys_in_time.py, at moments the check picks
on a clock the host stops for its whole process. Here the same moments go
through the gateway: a retry is the same run, reported as a replay (the same
runId and `Idempotent-Replayed: true`); the same text under another
clientMessageId, in the next window or with a capital letter is a new run in
the store, not only a new key; and a burst of identical requests makes one row.
"""

from __future__ import annotations

from labs.term.i18n import N_, _

from ..context import Answer, CheckContext, expect, record
from ..definition import check
from ..hints import Hint
from ..rules import (
    ONE_ROW_PER_KEY,
    OTHER_CLIENT_ID_NEW_RUN,
    OTHER_SESSION_NEW_RUN,
    RACE_ACCEPTED,
    RACE_ONE_RUN,
    REPLAY_REPORTED,
    RETRY_ACCEPTED,
    RETRY_SAME_RUN,
    TEXT_CAPITAL_NEW_RUN,
    TEXT_NEXT_WINDOW_NEW_RUN,
    TEXT_OTHER_SESSION_NEW_RUN,
    TEXT_OTHER_TEXT_NEW_RUN,
    TEXT_RETRY_SAME_RUN,
)
from .keys_in_time import a_window_start, keys_with_a_client_id, keys_without_a_client_id

# Identical requests in the race. Their threads take turns line by line of the tree
# (turns.py), so one race shows a lookup and an insert that are not under one lock.
BURST_SIZE = 3


@check(
    3,
    N_("idempotency: one run per clientMessageId in a session, even at once"),
    "shared/keys.py",
    second_process=True,
)
def idempotency(ctx: CheckContext) -> None:
    """The key follows the rule with and without a clientMessageId; one row per key, in a race."""
    keys_hint, store_hint = ctx.hint("shared/keys.py", 3), ctx.schema_or("infra/memory.py", 3)
    mine, theirs = ctx.new_session(), ctx.new_session()
    start = a_window_start(ctx)
    # The repeated request goes first, so a diagram of a failing key shows the run it made.
    # It is repeated a window later: with a clientMessageId, time plays no part.
    request = {"sessionId": mine, "message": ctx.text(), "clientMessageId": ctx.token("c")}
    ctx.clock(start)
    first = ctx.post("/chat", request)
    ctx.clock(start + ctx.bucket_seconds)
    second = ctx.post("/chat", request)
    keys_with_a_client_id(ctx, mine, theirs, start, keys_hint)
    retry_after = keys_without_a_client_id(ctx, mine, theirs, start, keys_hint)
    key = ctx.key(mine, str(request["clientMessageId"]), str(request["message"]))
    run_id = first.field("runId")
    expect(
        first.status == second.status == 202 and run_id is not None,
        _("202 for both requests"),
        _("{first} then {second}").format(first=first.shown(), second=second.shown()),
        rule=RETRY_ACCEPTED,
    )
    expect(
        run_id == second.field("runId"),
        _("the same runId for both requests"),
        _("{first} then {second} (two runs)").format(first=run_id, second=second.field("runId")),
        store_hint,
        rule=RETRY_SAME_RUN,
    )
    replays(first, second, store_hint)
    rows = ctx.rows_with_key(key)
    expect(
        rows == 1,
        _("one row in runs for the key"),
        _("{rows} rows").format(rows=rows),
        store_hint,
        rule=ONE_ROW_PER_KEY,
    )
    elsewhere = ctx.post("/chat", {**request, "sessionId": theirs}).field("runId")
    expect(
        elsewhere is not None and elsewhere != run_id,
        _("a new run for the same clientMessageId in another session"),
        _("{run}: the other session's run").format(run=elsewhere),
        keys_hint,
        rule=OTHER_SESSION_NEW_RUN,
    )
    another = ctx.post("/chat", {**request, "clientMessageId": ctx.token("c")})
    expect(
        another.status == 202 and another.field("runId") not in (None, run_id),
        _("202 and a new run for the same text under another clientMessageId in the same session"),
        _("{answer}: {run} was the first message's run").format(answer=another.shown(), run=run_id),
        store_hint,
        rule=OTHER_CLIENT_ID_NEW_RUN,
    )
    runs_without_a_client_id(ctx, mine, theirs, start, retry_after, keys_hint)
    ctx.clock(start)
    one_race(ctx, mine, store_hint)
    ctx.clock(None)


def replays(first: Answer, again: Answer, hint: Hint) -> None:
    """A replay says so: Idempotent-Replayed false for the new run, true for the replay."""
    expect(
        not first.replayed and again.replayed,
        _("Idempotent-Replayed: false for the request that made the run, true for its replay"),
        _(
            "Idempotent-Replayed: {first}, then {again}: create_run must say created=False "
            "when it hands back the run that already holds the key"
        ).format(first=str(first.replayed).lower(), again=str(again.replayed).lower()),
        hint,
        rule=REPLAY_REPORTED,
    )


def runs_without_a_client_id(
    ctx: CheckContext, mine: str, theirs: str, start: float, retry_after: float, hint: Hint
) -> None:
    """Through the gateway, no clientMessageId, the clock moved: a retry in the window is the
    same run and says so; the next window, another session or another text is a new run."""
    text = ctx.text()
    body = {"sessionId": mine, "message": text}
    ctx.clock(start)
    first = ctx.post("/chat", body)
    ctx.clock(start + retry_after)
    again = ctx.post("/chat", body)
    expect(
        first.status == again.status == 202 and first.field("runId") == again.field("runId"),
        _(
            "without a clientMessageId, 202 and the same runId when the same text is sent "
            "again {seconds:g} s later, in the same window"
        ).format(seconds=retry_after),
        _("{first} then {second}: the gateway's retry was another run").format(
            first=first.shown(), second=again.shown()
        ),
        hint,
        rule=TEXT_RETRY_SAME_RUN,
    )
    replays(first, again, hint)
    ctx.clock(start + ctx.bucket_seconds)
    next_window = ctx.post("/chat", body)
    ctx.clock(start)
    there = ctx.post("/chat", {"sessionId": theirs, "message": text})
    other = ctx.post("/chat", {"sessionId": mine, "message": ctx.text()})
    capital = ctx.post("/chat", {"sessionId": mine, "message": text.capitalize()})
    for answer, what, rule in (
        (next_window, _("the same text in the next window"), TEXT_NEXT_WINDOW_NEW_RUN),
        (there, _("the same text in another session"), TEXT_OTHER_SESSION_NEW_RUN),
        (other, _("another text in the same session"), TEXT_OTHER_TEXT_NEW_RUN),
        (capital, _("the same text with a capital letter"), TEXT_CAPITAL_NEW_RUN),
    ):
        expect(
            answer.status == 202
            and answer.field("runId") not in (None, first.field("runId"))
            and not answer.replayed,
            _("without a clientMessageId, 202 and a new run for {what}").format(what=what),
            _("{answer}: {run} was the first message's run").format(
                answer=answer.shown(), run=first.field("runId")
            ),
            hint,
            rule=rule,
        )


def one_race(ctx: CheckContext, session_id: str, hint: Hint) -> None:
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
        rule=RACE_ACCEPTED,
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
        hint,
        rule=RACE_ONE_RUN,
    )
