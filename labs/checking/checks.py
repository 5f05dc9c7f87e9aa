"""The six self-checks of the day-8 lab.

Each check drives a tree only through its host (host.py): the gateway's HTTP
answers, the store's methods, the key, the statuses and the worker's query.
Where a check stands for a rule it tests the rule, not one sample, with
inputs drawn from the run's seed. A failing check raises CheckFailed with
what it expected, what it got, and the TODO(check N) line to edit.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from labs.term.i18n import N_, _

from .context import (
    CHECKS,
    Check,
    CheckContext,
    CheckFailed,
    Refused,
    check,
    expect,
    record,
    store_call,
)
from .hints import Hint

__all__ = ["CHECKS", "LESSON_MOVES", "Check", "CheckContext", "CheckFailed", "expect"]

# The lesson's state machine: the moves a run may make, all others refused.
LESSON_MOVES: dict[str, frozenset[str]] = {
    "pending": frozenset({"running", "cancelled", "failed"}),
    "running": frozenset({"streaming", "done", "failed", "cancelled"}),
    "streaming": frozenset({"done", "failed", "cancelled"}),
    "done": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
# How check 4 brings a new run to each status, by moves the lesson allows.
PATHS: dict[str, tuple[tuple[str, str], ...]] = {
    "pending": (),
    "running": (("pending", "running"),),
    "streaming": (("pending", "running"), ("running", "streaming")),
    "done": (("pending", "running"), ("running", "done")),
    "failed": (("pending", "failed"),),
    "cancelled": (("pending", "cancelled"),),
}
BURSTS, BURST_SIZE = 3, 4  # check 3's races: how many, and how many requests in each


@check(1, N_("gateway intake: POST /chat answers 202 with a pending run"), "gateway/routes.py")
def gateway_intake(ctx: CheckContext) -> None:
    """A valid message is accepted with 202; a malformed one gets 400 naming the field."""
    session_id = ctx.new_session()
    answer = ctx.post("/chat", {"sessionId": session_id, "message": ctx.text()})
    expect(
        answer.status == 202
        and bool(answer.field("runId"))
        and answer.field("status") == "pending",
        _("202 {runId, status: pending}"),
        answer.shown(),
    )
    for bad, field in (
        ({"message": ctx.text()}, "sessionId"),
        ({"sessionId": session_id}, "message"),
    ):
        refused = ctx.post("/chat", bad)
        expect(
            refused.status == 400 and field in refused.text,
            _("400 naming {field} when it is missing").format(field=field),
            refused.shown(),
        )


@check(2, N_("the store keeps sessions, runs and messages, in seq order"), "infra/memory.py")
def three_grains(ctx: CheckContext) -> None:
    """A session, a run and its messages round-trip and read back ordered by seq."""
    user_id, title = ctx.token("learner"), ctx.text()
    session = record(ctx.store("create_session", user_id, title))
    stored = record(ctx.store("get_session", session.get("id"), traced=False))
    expect(
        (stored.get("user_id"), stored.get("title")) == (user_id, title),
        _("the session to read back with its user_id and title"),
        f"{stored.get('user_id')!r}, {stored.get('title')!r}",
    )
    created = record(ctx.store("create_run", session["id"], ctx.text(), ctx.token("key")))
    run_id = str(record(created.get("run")).get("id"))
    status = ctx.status_of(run_id)
    expect(status == "pending", _("the new run to read back as pending"), status)
    seqs = ctx.rng.sample(range(50), 3)
    writes = [
        store_call(
            "append_message",
            session["id"],
            run_id,
            "assistant",
            ctx.text(),
            seq,
            actor="worker",
            traced=True,
        )
        for seq in seqs
    ]
    for reply in ctx.batch(writes):
        if isinstance(reply, Refused):
            raise CheckFailed(_("each message to be stored"), reply.describe())
    found = ctx.store("messages_for_run", run_id, actor="worker")
    read = [record(m).get("seq") for m in found] if isinstance(found, list) else found
    expect(
        read == sorted(seqs),
        _("messages read back ordered by seq: {seqs}").format(seqs=sorted(seqs)),
        str(read),
    )


@check(
    3, N_("idempotency: one run per clientMessageId in a session, even at once"), "shared/keys.py"
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
        if isinstance(reply, Refused):
            raise CheckFailed(_("idempotency_key_for to return a key"), reply.describe(), keys_hint)
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
    request = {"sessionId": mine, "message": text, "clientMessageId": client_id}
    first, second = ctx.post("/chat", request), ctx.post("/chat", request)
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


@check(
    4,
    N_("state machine: every allowed move goes through, every other is refused"),
    "shared/states.py",
)
def state_machine(ctx: CheckContext) -> None:
    """All 36 moves: the lesson's go through; others raise naming both states, changing nothing."""
    hint = ctx.hint("shared/states.py", 4)
    expect(
        sorted(ctx.statuses) == sorted(LESSON_MOVES),
        _("the six statuses {statuses}").format(statuses=", ".join(LESSON_MOVES)),
        ", ".join(ctx.statuses),
        hint,
    )
    # One run per (from, to) pair, brought to `from` by the lesson's moves, then moved.
    pairs = [(current, target) for current in LESSON_MOVES for target in LESSON_MOVES]
    session_id = str(record(ctx.store("create_session", ctx.token("user"), "moves")).get("id"))
    created = ctx.batch(
        [store_call("create_run", session_id, ctx.text(), ctx.token("key")) for _ in pairs]
    )
    runs = [str(record(record(reply).get("run")).get("id")) for reply in created]
    walks = [
        (run_id, step)
        for run_id, (current, _target) in zip(runs, pairs, strict=True)
        for step in PATHS[current]
    ]
    for (_run, (current, target)), reply in zip(
        walks, ctx.batch([move_call(r, s) for r, s in walks]), strict=True
    ):
        if isinstance(reply, Refused):
            raise refused_move(current, target, reply, hint)
    replies = ctx.batch(
        [
            store_call("transition", r, c, t, actor="worker")
            for r, (c, t) in zip(runs, pairs, strict=True)
        ]
    )
    after = ctx.statuses_of(runs)
    went_through: list[str] = []
    for (current, target), reply, status in zip(pairs, replies, after, strict=True):
        if target in LESSON_MOVES[current]:
            if isinstance(reply, Refused):
                raise refused_move(current, target, reply, hint)
            expect(
                status == target,
                _("{current} -> {target} to leave the run {target}").format(
                    current=current, target=target
                ),
                status,
                hint,
            )
        elif not isinstance(reply, Refused):
            went_through.append(f"{current} -> {target}")
        else:
            expect(
                reply.type == "IllegalTransitionError"
                and current in reply.message
                and target in reply.message,
                _("IllegalTransitionError naming both states ({current}, {target})").format(
                    current=current, target=target
                ),
                reply.describe(),
                hint,
            )
            expect(
                status == current,
                _("the refused move {current} -> {target} to leave the run {current}").format(
                    current=current, target=target
                ),
                _("the run is now {status}").format(status=status),
                hint,
            )
    if went_through:
        raise moves_went_through(went_through, hint)
    # One traced walk, for the sequence diagram: pending -> running -> done, then refused.
    run_id = runs[0]
    for current, target in (("pending", "running"), ("running", "done"), ("done", "running")):
        with contextlib.suppress(Refused):
            ctx.store("transition", run_id, current, target, actor="worker")


def move_call(run_id: str, step: tuple[str, str]) -> dict[str, Any]:
    """The store request for one step of a walk."""
    return store_call("transition", run_id, step[0], step[1], actor="worker")


def refused_move(current: str, target: str, error: Refused, hint: Hint) -> CheckFailed:
    """The failure for a move the lesson allows that the tree refused."""
    if (current, target) == ("pending", "failed"):
        wanted = _("pending -> failed to be allowed (a run may fail before it ever runs)")
    else:
        wanted = _("{current} -> {target} to be allowed").format(current=current, target=target)
    return CheckFailed(wanted, error.describe(), hint)


def moves_went_through(moves: list[str], hint: Hint) -> CheckFailed:
    """The failure for moves the lesson refuses that went through, the worst one named first."""
    worst = min(moves, key=lesson_order)
    others = [m for m in moves if m != worst]
    state, _arrow, target = worst.partition(" -> ")
    got = _("the move went through: the {state} run is {target} again").format(
        state=state, target=target
    )
    if others:
        listed = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
        got += _(" (and {count} more the lesson refuses: {moves})").format(
            count=len(others), moves=listed
        )
    return CheckFailed(_("IllegalTransitionError for {move}").format(move=worst), got, hint)


def lesson_order(move: str) -> tuple[bool, bool, bool, int, int]:
    """Which wrong move to name first: out of a terminal state, to running, never a self-move."""
    current, _arrow, target = move.partition(" -> ")
    order = list(LESSON_MOVES)
    terminal = not LESSON_MOVES.get(current, frozenset({""}))
    return (
        not terminal,
        current == target,
        target != "running",
        order.index(current),
        order.index(target),
    )


@check(
    5, N_("message order: one message per (run, seq), and seq 0 in every run"), "infra/memory.py"
)
def message_order(ctx: CheckContext) -> None:
    """seq 0 and 1 in one run and seq 0 in another are accepted; a second seq 0 is refused."""
    hint = ctx.schema_or("infra/memory.py", 5)
    session_id = ctx.new_session()
    created = ctx.batch(
        [
            store_call("create_run", session_id, ctx.text(), ctx.token("key"), traced=True)
            for _ in range(2)
        ]
    )
    one, two = (str(record(record(reply).get("run")).get("id")) for reply in created)
    first, later = ctx.text(), ctx.rng.randrange(2, 1000)
    accepted = (
        (one, 0, first, _("seq 0 in a new run")),
        (one, 1, ctx.text(), _("seq 1 after seq 0 in the same run")),
        (two, 0, ctx.text(), _("seq 0 in a second run: the rule is one message per (run, seq)")),
        (one, later, ctx.text(), _("seq {seq} in the first run").format(seq=later)),
    )
    refused = ((one, 0, ctx.text()), (one, later, ctx.text()))
    replies = ctx.batch(
        [
            store_call(
                "append_message",
                session_id,
                run,
                "assistant",
                text,
                seq,
                actor="worker",
                traced=True,
            )
            for run, seq, text, *_ in accepted + refused
        ]
    )
    for (*_written, what), reply in zip(accepted, replies, strict=False):
        if isinstance(reply, Refused):
            raise CheckFailed(_("{what} to be accepted").format(what=what), reply.describe(), hint)
    for (run, seq, _text), reply in zip(refused, replies[len(accepted) :], strict=True):
        if not isinstance(reply, Refused):
            rows = len(ctx.messages_at(run, seq))
            raise CheckFailed(
                _("DuplicateMessageError for the second seq {seq}").format(seq=seq),
                _("the write went through: {rows} rows at seq {seq}").format(rows=rows, seq=seq),
                hint,
            )
        expect(
            reply.type == "DuplicateMessageError",
            _("DuplicateMessageError for the second seq {seq}").format(seq=seq),
            reply.describe(),
            hint,
        )
    kept = ctx.messages_at(one, 0)
    expect(kept == [first], _("the first message to stay at seq 0"), str(kept), hint)


@check(6, N_("worker: the read-only query sees the run the gateway persisted"), "worker/queries.py")
def worker_sees_pending(ctx: CheckContext) -> None:
    """After POST /chat, pending_runs lists the new run, still pending."""
    answer = ctx.post("/chat", {"sessionId": ctx.new_session(), "message": ctx.text()})
    run_id = answer.field("runId")
    expect(answer.status == 202 and run_id is not None, _("202 with a runId"), answer.shown())
    seen = ctx.host.call("pending_runs", limit=10_000)
    ids = (
        {record(r).get("id"): record(r).get("status") for r in seen}
        if isinstance(seen, list)
        else {}
    )
    expect(
        run_id in ids,
        _("pending_runs to include {run}").format(run=run_id),
        _("{count} pending run(s), not that one").format(count=len(ids)),
    )
    expect(ids[run_id] == "pending", _("the run to be pending"), str(ids[run_id]))
