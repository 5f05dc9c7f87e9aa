"""Check 2: the store keeps the three grains, sessions, runs and messages."""

from __future__ import annotations

from labs.lesson.states import RunStatus
from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record, store_call
from ..definition import check
from ..errors import CheckFailedError, RefusedError
from ..rules import MESSAGE_STORED, MESSAGES_IN_SEQ_ORDER, NEW_RUN_PENDING, SESSION_READS_BACK


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
        rule=SESSION_READS_BACK,
    )
    created = record(ctx.store("create_run", session["id"], ctx.text(), ctx.token("key")))
    run_id = str(record(created.get("run")).get("id"))
    status = ctx.status_of(run_id)
    expect(
        status == RunStatus.PENDING,
        _("the new run to read back as pending"),
        status,
        rule=NEW_RUN_PENDING,
    )
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
        if isinstance(reply, RefusedError):
            raise CheckFailedError(
                _("each message to be stored"), reply.describe(), rules=(MESSAGE_STORED,)
            )
    found = ctx.store("messages_for_run", run_id, actor="worker")
    read = [record(m).get("seq") for m in found] if isinstance(found, list) else found
    expect(
        read == sorted(seqs),
        _("messages read back ordered by seq: {seqs}").format(seqs=sorted(seqs)),
        str(read),
        rule=MESSAGES_IN_SEQ_ORDER,
    )
