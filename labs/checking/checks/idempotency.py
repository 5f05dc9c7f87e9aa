"""Check 3: one run per message, however often and however fast it is sent.

The key's rule, both ways the lesson gives it:
- with a clientMessageId: session + clientMessageId, blind to time;
- without one: session + text + a coarse time bucket, so the same text in
  the same window is a retry, and an hour later it is a new message.
Either way the key is scoped to its session, differs for different messages,
and is the same in every process (the gateway is stateless and runs many
instances: a second process of the tree computes the same keys). The
windows are taken from the tree's TIME_BUCKET_SECONDS (else the lesson's
60 s), assuming no more of the learner's bucketing than that.
"""

from __future__ import annotations

import itertools
from typing import Any

from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record
from ..definition import check
from ..errors import CheckFailedError, RefusedError
from ..hints import Hint

BURSTS, BURST_SIZE = 3, 4  # the races: how many, and how many requests in each
HOUR = 3600.0  # the lesson's "an hour later": never the same window
SAMPLES = 5  # moments over 0.9 of one window: a bucketing that fits changes key at most once


@check(
    3,
    N_("idempotency: one run per clientMessageId in a session, even at once"),
    "shared/keys.py",
)
def idempotency(ctx: CheckContext) -> None:
    """The key follows the rule with and without a clientMessageId; one row per key, in a race."""
    keys_hint, store_hint = ctx.hint("shared/keys.py", 3), ctx.schema_or("infra/memory.py", 3)
    mine, theirs = ctx.new_session(), ctx.new_session()
    # The repeated request goes first, so a diagram of a failing key shows the run it made.
    request = {"sessionId": mine, "message": ctx.text(), "clientMessageId": ctx.token("c")}
    first, second = ctx.post("/chat", request), ctx.post("/chat", request)
    keys_with_a_client_id(ctx, mine, theirs, keys_hint)
    keys_without_a_client_id(ctx, mine, theirs, keys_hint)
    key = ctx.key(mine, str(request["clientMessageId"]), str(request["message"]))
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
    runs_without_a_client_id(ctx, mine, theirs, keys_hint)
    for _race in range(BURSTS):
        one_race(ctx, mine, store_hint)


def keys_with_a_client_id(ctx: CheckContext, mine: str, theirs: str, hint: Hint) -> None:
    """Same session and clientMessageId: one key, now or an hour later, in any process."""
    client_id, other_id, text = ctx.token("c"), ctx.token("c"), ctx.text()
    now = a_moment(ctx)
    calls = [
        key_call(mine, client_id, text),
        key_call(mine, client_id, text),
        key_call(mine, client_id, text, now),
        key_call(mine, client_id, text, now + HOUR),
        key_call(theirs, client_id, text),
        key_call(mine, other_id, text),
    ]
    key, again, at_now, later, theirs_key, other_key = computed(ctx, calls, hint)
    expect(
        key == again,
        _("idempotency_key_for to return the same key for the same request"),
        _("{first}… then {second}…: the key changes on every call").format(
            first=key[:12], second=again[:12]
        ),
        hint,
    )
    expect(
        later == at_now == key,
        _("the same key an hour later: with a clientMessageId, time plays no part"),
        _("a different key once the clock moved on: a retry after a pause makes a second run"),
        hint,
    )
    expect(
        theirs_key != key,
        _("another key for the same clientMessageId in another session"),
        _("the same key: one session's request would replay another session's run"),
        hint,
    )
    expect(
        other_key != key,
        _("another key for another clientMessageId"),
        _("the same key for {one} and {other}: two messages would share one run").format(
            one=client_id, other=other_id
        ),
        hint,
    )
    same_in_another_process(ctx, calls[2:4], [at_now, later], hint)


def keys_without_a_client_id(ctx: CheckContext, mine: str, theirs: str, hint: Hint) -> None:
    """No clientMessageId: the text, its session and the time window make the key."""
    window = ctx.bucket_seconds
    text, other_text = ctx.text(), ctx.text()
    start = a_moment(ctx)
    moments = [start + i * 0.9 * window / (SAMPLES - 1) for i in range(SAMPLES)]
    calls = [key_call(mine, None, text, moment) for moment in moments]
    calls += [
        key_call(mine, None, text, start + HOUR),
        key_call(theirs, None, text, start),
        key_call(mine, None, other_text, start),
    ]
    keys = computed(ctx, calls, hint)
    in_window, later, theirs_key, other_key = keys[:SAMPLES], *keys[SAMPLES:]
    changes = sum(a != b for a, b in itertools.pairwise(in_window))
    expect(
        changes <= 1,
        _(
            "without a clientMessageId, the same text sent again within {seconds:g} s "
            "(TIME_BUCKET_SECONDS) to be a retry: the same key"
        ).format(seconds=window),
        _(
            "the key changed {changes} times over {span:g} s: a retry a few seconds later "
            "makes a second run (the time in the key must be the window it falls in)"
        ).format(changes=changes, span=0.9 * window),
        hint,
    )
    expect(
        later != keys[0],
        _("without a clientMessageId, the same text an hour later to be a new message: a new key"),
        _(
            "the same key: the same words an hour later are taken for a retry and get the "
            "old run back (no time window in the key, or one longer than an hour)"
        ),
        hint,
    )
    expect(
        theirs_key != keys[0],
        _("without a clientMessageId, another key for the same text in another session"),
        _("the same key: another session's \u201c{text}\u201d would get this session's run").format(
            text=text
        ),
        hint,
    )
    expect(
        other_key != keys[0],
        _("without a clientMessageId, another key for another text in the same session"),
        _(
            "the same key for \u201c{one}\u201d and \u201c{other}\u201d: the second message would "
            "be refused with 409 or given the first one's run"
        ).format(one=text, other=other_text),
        hint,
    )
    same_in_another_process(ctx, [calls[0], calls[SAMPLES + 1]], [keys[0], theirs_key], hint)


def a_moment(ctx: CheckContext) -> float:
    """A moment between 2020 and 2030 drawn from the run's inputs: a seed repeats it too."""
    return ctx.rng.uniform(1.58e9, 1.9e9)


def same_in_another_process(
    ctx: CheckContext, calls: list[dict[str, Any]], here: list[str], hint: Hint
) -> None:
    """A second process of the tree computes the same keys: the gateway runs many instances."""
    if ctx.second_process is None:
        return
    there = computed(ctx, calls, hint, ctx.second_process())
    expect(
        there == here,
        _("the same key from a second gateway process for the same request"),
        _(
            "{here}… in one process, {there}… in another: the key depends on the process "
            "(a per-process salt such as Python's hash(), an object's id, a random value), so "
            "a retry that reaches another instance, or comes after a restart, makes a second run"
        ).format(here=here[0][:12], there=(there or [""])[0][:12]),
        hint,
    )


def computed(
    ctx: CheckContext, calls: list[dict[str, Any]], hint: Hint, host: Any = None
) -> list[str]:
    """The keys for calls, in one round trip; a key that raised fails the check."""
    replies = ctx.batch(calls, host)
    for reply in replies:
        if isinstance(reply, RefusedError):
            raise CheckFailedError(_("idempotency_key_for to return a key"), reply.describe(), hint)
    return [str(reply) for reply in replies]


def runs_without_a_client_id(ctx: CheckContext, mine: str, theirs: str, hint: Hint) -> None:
    """Through the gateway, no clientMessageId: a retry is the same run, nothing else is."""
    text, other_text = ctx.text(), ctx.text()
    first, again = retried(ctx, {"sessionId": mine, "message": text})
    expect(
        first.status == again.status == 202 and first.field("runId") == again.field("runId"),
        _("without a clientMessageId, 202 and the same runId when the same text is sent twice"),
        _(
            "{first} then {second}: the gateway's retry of the same text a moment later was "
            "another run (its key, computed without `now`, changed in between)"
        ).format(first=first.shown(), second=again.shown()),
        hint,
    )
    there = ctx.post("/chat", {"sessionId": theirs, "message": text})
    other = ctx.post("/chat", {"sessionId": mine, "message": other_text})
    for answer, what in (
        (there, _("the same text in another session")),
        (other, _("another text in the same session")),
    ):
        expect(
            answer.status == 202 and answer.field("runId") not in (None, first.field("runId")),
            _("without a clientMessageId, 202 and a new run for {what}").format(what=what),
            _("{answer}: {run} was the first message's run").format(
                answer=answer.shown(), run=first.field("runId")
            ),
            hint,
        )


def retried(ctx: CheckContext, body: dict[str, Any]) -> tuple[Any, Any]:
    """The same request twice; once more with new text if a window ended in between."""
    first, again = ctx.post("/chat", body), ctx.post("/chat", body)
    if first.field("runId") != again.field("runId"):  # a window's edge, once in a long while
        body = {**body, "message": ctx.text()}
        first, again = ctx.post("/chat", body), ctx.post("/chat", body)
    return first, again


def key_call(
    session_id: str, client_message_id: str | None, message: str, now: float | None = None
) -> dict[str, Any]:
    """The request for idempotency_key_for(...), for CheckContext.batch."""
    return {
        "op": "key",
        "session_id": session_id,
        "client_message_id": client_message_id,
        "message": message,
        "now": now,
    }


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
    )
