"""Check 1: the gateway takes a message in with 202 and refuses a malformed one."""

from __future__ import annotations

from labs.lesson.states import RunStatus
from labs.term.i18n import N_, _

from ..context import CheckContext, expect
from ..definition import check
from ..rules import ACCEPTS_MESSAGE, refuses_missing


@check(1, N_("gateway intake: POST /chat answers 202 with a pending run"), "gateway/routes.py")
def gateway_intake(ctx: CheckContext) -> None:
    """A valid message is accepted with 202; a malformed one gets 400 naming the field."""
    session_id = ctx.new_session()
    answer = ctx.post("/chat", {"sessionId": session_id, "message": ctx.text()})
    expect(
        answer.status == 202
        and bool(answer.field("runId"))
        and answer.field("status") == RunStatus.PENDING,
        _("202 {runId, status: pending}"),
        answer.shown(),
        rule=ACCEPTS_MESSAGE,
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
            rule=refuses_missing(field),
        )
