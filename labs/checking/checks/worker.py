"""Check 6: the worker's read-only query sees what the gateway persisted."""

from __future__ import annotations

from labs.lesson.states import RunStatus
from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record
from ..definition import check
from ..rules import ACCEPTS_MESSAGE, PENDING_RUN_STATUS, PENDING_RUNS_LIST


@check(6, N_("worker: the read-only query sees the run the gateway persisted"), "worker/queries.py")
def worker_sees_pending(ctx: CheckContext) -> None:
    """After POST /chat, pending_runs lists the new run, still pending."""
    answer = ctx.post("/chat", {"sessionId": ctx.new_session(), "message": ctx.text()})
    run_id = answer.field("runId")
    expect(
        answer.status == 202 and run_id is not None,
        _("202 with a runId"),
        answer.shown(),
        rule=ACCEPTS_MESSAGE,
    )
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
        rule=PENDING_RUNS_LIST,
    )
    expect(
        ids[run_id] == RunStatus.PENDING,
        _("the run to be pending"),
        str(ids[run_id]),
        rule=PENDING_RUN_STATUS,
    )
