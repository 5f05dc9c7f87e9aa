"""Check 5: one message per (run, seq)."""

from __future__ import annotations

from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record, store_call
from ..definition import check
from ..errors import CheckFailedError, RefusedError


@check(
    5,
    N_("message order: one message per (run, seq), and seq 0 in every run"),
    "infra/memory.py",
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
    # Each accepted write: where it goes, and what the learner's store must accept, with why.
    per_run = _("the rule is one message per (run, seq), so every run has its own seq 0")
    accepted = (
        (one, 0, first, _("seq 0 in a new run"), ""),
        (one, 1, ctx.text(), _("seq 1 after seq 0 in the same run"), ""),
        (two, 0, ctx.text(), _("seq 0 in a second run"), per_run),
        (one, later, ctx.text(), _("seq {seq} in the first run").format(seq=later), ""),
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
    for (*_written, what, why), reply in zip(accepted, replies, strict=False):
        if isinstance(reply, RefusedError):
            wanted = _("{what} to be accepted").format(what=what)
            if why:
                wanted = _("{what} to be accepted: {why}").format(what=what, why=why)
            raise CheckFailedError(wanted, reply.describe(), hint)
    for (run, seq, _text), reply in zip(refused, replies[len(accepted) :], strict=True):
        if not isinstance(reply, RefusedError):
            rows = len(ctx.messages_at(run, seq))
            raise CheckFailedError(
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
