"""The six self-checks of the day-8 lab.

Each check drives a tree only through its public surface: the gateway's
create_app, the store from its infra package, the key, the statuses, the
errors and the worker's query. A failing check raises CheckFailed with
what it expected, what it got, and which TODO to edit.
"""

from __future__ import annotations

from .harness import CHECKS, Check, CheckContext, CheckFailed, check, expect, make_context

__all__ = ["CHECKS", "Check", "CheckContext", "CheckFailed", "expect", "make_context"]


@check(1, "gateway intake: POST /chat answers 202 with a pending run", "gateway/routes.py")
def gateway_intake(ctx: CheckContext) -> None:
    """A valid message is accepted with 202; a malformed one gets 400 naming the field."""
    session_id = ctx.new_session()
    answer = ctx.client.post("/chat", {"sessionId": session_id, "message": "hello"})
    body = answer.get_json(silent=True) or {}
    expect(
        answer.status_code == 202 and bool(body.get("runId")) and body.get("status") == "pending",
        "202 {runId, status: pending}",
        f"{answer.status_code} {body}",
    )
    for bad, field in (({"message": "hi"}, "sessionId"), ({"sessionId": session_id}, "message")):
        refused = ctx.client.post("/chat", bad)
        text = refused.get_data(as_text=True)
        expect(
            refused.status_code == 400 and field in text,
            f"400 naming {field} when it is missing",
            f"{refused.status_code} {text.strip()}",
        )


@check(2, "the store keeps sessions, runs and messages, in seq order", "infra/memory.py")
def three_grains(ctx: CheckContext) -> None:
    """A session, a run and its messages round-trip and read back ordered by seq."""
    with ctx.trace.acting_as("gateway"):
        session = ctx.store.create_session("learner-2", "three grains")
        run = ctx.store.create_run(session.id, "what is a run?", f"check-2-{session.id}").run
    stored = ctx.raw.get_session(session.id)
    expect(
        (stored.user_id, stored.title) == ("learner-2", "three grains"),
        "the session to read back with its user_id and title",
        f"{stored.user_id!r}, {stored.title!r}",
    )
    status = str(ctx.raw.get_run(run.id).status)
    expect(status == "pending", "the new run to read back as pending", status)
    with ctx.trace.acting_as("worker"):
        for seq, role in ((2, "assistant"), (0, "user"), (1, "assistant")):
            ctx.store.append_message(session.id, run.id, role, f"part {seq}", seq)
        seqs = [m.seq for m in ctx.store.messages_for_run(run.id)]
    expect(seqs == [0, 1, 2], "messages read back ordered by seq: [0, 1, 2]", str(seqs))


@check(3, "idempotency: the same clientMessageId twice gives one run", "shared/keys.py")
def idempotency(ctx: CheckContext) -> None:
    """Two identical requests get the same runId, and the runs table holds one row."""
    session_id = ctx.new_session()
    request = {"sessionId": session_id, "message": "book me a flight", "clientMessageId": "c-42"}
    first = ctx.client.post("/chat", request).get_json(silent=True) or {}
    second = ctx.client.post("/chat", request).get_json(silent=True) or {}
    keys = ctx.tree.module("shared.keys")
    key_a = keys.idempotency_key_for(session_id, "c-42", "book me a flight")
    key_b = keys.idempotency_key_for(session_id, "c-42", "book me a flight")
    expect(
        key_a == key_b,
        "idempotency_key_for to return the same key for the same request",
        f"{key_a[:12]}… then {key_b[:12]}…: the key changes on every call",
        ctx.hint("shared/keys.py", 3),
    )
    expect(
        first.get("runId") is not None and first.get("runId") == second.get("runId"),
        "the same runId for both requests",
        f"{first.get('runId')} then {second.get('runId')} (two runs)",
        ctx.schema_or("infra/memory.py", 3),
    )
    rows = ctx.raw.count_runs_with_key(key_a)
    expect(
        rows == 1,
        "one row in runs for the key",
        f"{rows} rows",
        ctx.schema_or("infra/memory.py", 3),
    )


@check(4, "state machine: pending -> running allowed, done -> running refused", "shared/states.py")
def state_machine(ctx: CheckContext) -> None:
    """Allowed moves go through; moving a done run back to running raises, naming both states."""
    pending, running, done = ctx.status("PENDING"), ctx.status("RUNNING"), ctx.status("DONE")
    run = ctx.new_run("state machine")
    hint = ctx.hint("shared/states.py", 4)
    with ctx.trace.acting_as("worker"):
        moved = ctx.store.transition(run.id, pending, running)
        expect(
            str(moved.status) == "running",
            "pending -> running to be allowed",
            str(moved.status),
            hint,
        )
        ctx.store.transition(run.id, running, done)
        illegal = ctx.error("IllegalTransitionError")
        try:
            ctx.store.transition(run.id, done, running)
        except illegal as error:
            text = str(error)
            expect(
                "done" in text and "running" in text,
                "an error naming both states (done, running)",
                repr(text),
                hint,
            )
        else:
            raise CheckFailed(
                "IllegalTransitionError for done -> running",
                "the move went through: the done run is running again",
                hint,
            )
    status = str(ctx.raw.get_run(run.id).status)
    expect(status == "done", "the run to stay done", status, hint)


@check(5, "message order: a second seq 0 for one run is refused", "infra/memory.py")
def message_order(ctx: CheckContext) -> None:
    """Writing seq 0 twice raises DuplicateMessageError and leaves one row."""
    run = ctx.new_run("message order")
    session_id = run.session_id
    duplicate = ctx.error("DuplicateMessageError")
    hint = ctx.schema_or("infra/memory.py", 5)
    with ctx.trace.acting_as("worker"):
        ctx.store.append_message(session_id, run.id, "assistant", "first", 0)
        try:
            ctx.store.append_message(session_id, run.id, "assistant", "again", 0)
        except duplicate:
            pass
        else:
            rows = len(ctx.raw.messages_for_run(run.id))
            raise CheckFailed(
                "DuplicateMessageError for the second seq 0",
                f"the write went through: {rows} rows at seq 0",
                hint,
            )
    rows = len(ctx.raw.messages_for_run(run.id))
    expect(rows == 1, "one row in messages for the run", f"{rows} rows", hint)


@check(6, "worker: the read-only query sees the run the gateway persisted", "worker/queries.py")
def worker_sees_pending(ctx: CheckContext) -> None:
    """After POST /chat, pending_runs lists the new run, still pending."""
    session_id = ctx.new_session()
    answer = ctx.client.post("/chat", {"sessionId": session_id, "message": "for the worker"})
    run_id = (answer.get_json(silent=True) or {}).get("runId")
    expect(
        answer.status_code == 202 and run_id is not None,
        "202 with a runId",
        f"{answer.status_code}",
    )
    with ctx.trace.acting_as("worker"):
        seen = ctx.tree.module("worker").pending_runs(ctx.store, 10_000)
    ids = {run.id: str(run.status) for run in seen}
    expect(
        run_id in ids,
        f"pending_runs to include {run_id}",
        f"{len(ids)} pending run(s), not that one",
    )
    expect(ids[run_id] == "pending", "the run to be pending", ids[run_id])
