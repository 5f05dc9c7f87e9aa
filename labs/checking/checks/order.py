"""Check 5: one message per (run, seq)."""

from __future__ import annotations

from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record, store_call
from ..definition import check
from ..errors import CheckFailedError, RefusedError
from ..rules import (
    DUPLICATE_ERROR,
    DUPLICATE_REFUSED,
    FIRST_MESSAGE_KEPT,
    MESSAGE_ACCEPTED,
    SEQ_PER_RUN,
)


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
    # Each accepted write: where it goes, what the learner's store must accept, why, the rule.
    per_run = _("the rule is one message per (run, seq), so every run has its own seq 0")
    accepted = (
        (one, 0, first, _("seq 0 in a new run"), "", MESSAGE_ACCEPTED),
        (one, 1, ctx.text(), _("seq 1 after seq 0 in the same run"), "", MESSAGE_ACCEPTED),
        (two, 0, ctx.text(), _("seq 0 in a second run"), per_run, SEQ_PER_RUN),
        (
            one,
            later,
            ctx.text(),
            _("seq {seq} in the first run").format(seq=later),
            "",
            MESSAGE_ACCEPTED,
        ),
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
    for (*_written, what, why, rule), reply in zip(accepted, replies, strict=False):
        if isinstance(reply, RefusedError):
            wanted = _("{what} to be accepted").format(what=what)
            if why:
                wanted = _("{what} to be accepted: {why}").format(what=what, why=why)
            raise CheckFailedError(wanted, reply.describe(), hint, (rule,))
    for (run, seq, _text), reply in zip(refused, replies[len(accepted) :], strict=True):
        if not isinstance(reply, RefusedError):
            rows = len(ctx.messages_at(run, seq))
            raise CheckFailedError(
                _("DuplicateMessageError for the second seq {seq}").format(seq=seq),
                _("the write went through: {rows} rows at seq {seq}").format(rows=rows, seq=seq),
                hint,
                (DUPLICATE_REFUSED,),
            )
        expect(
            reply.type == "DuplicateMessageError",
            _("DuplicateMessageError for the second seq {seq}").format(seq=seq),
            reply.describe(),
            hint,
            rule=DUPLICATE_ERROR,
        )
    kept = ctx.messages_at(one, 0)
    expect(
        kept == [first],
        _("the first message to stay at seq 0"),
        str(kept),
        hint,
        rule=FIRST_MESSAGE_KEPT,
    )
