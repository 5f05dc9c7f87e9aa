"""Check 4: the state machine lets the lesson's moves through and refuses all others."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from labs.lesson.states import LESSON_MOVES, PATHS, STATUSES, RunStatus
from labs.term.i18n import N_, _

from ..context import CheckContext, expect, record, store_call
from ..definition import check
from ..errors import CheckFailedError, RefusedError
from ..hints import Hint
from ..rules import (
    LETS_EVERY_MOVE,
    MOVE_APPLIED,
    REFUSAL_NAMES_STATES,
    REFUSED_MOVE_KEEPS_RUN,
    SIX_STATUSES,
    lets,
    refuses,
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
        sorted(ctx.statuses) == sorted(STATUSES),
        _("the six statuses {statuses}").format(statuses=", ".join(STATUSES)),
        ", ".join(ctx.statuses),
        hint,
        rule=SIX_STATUSES,
    )
    # One run per (from, to) pair, brought to `from` by the lesson's moves, then moved.
    pairs = [(current, target) for current in STATUSES for target in STATUSES]
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
        if isinstance(reply, RefusedError):
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
            if isinstance(reply, RefusedError):
                raise refused_move(current, target, reply, hint)
            expect(
                status == target,
                _("{current} -> {target} to leave the run {target}").format(
                    current=current, target=target
                ),
                status,
                hint,
                rule=MOVE_APPLIED,
            )
        elif not isinstance(reply, RefusedError):
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
                rule=REFUSAL_NAMES_STATES,
            )
            expect(
                status == current,
                _("the refused move {current} -> {target} to leave the run {current}").format(
                    current=current, target=target
                ),
                _("the run is now {status}").format(status=status),
                hint,
                rule=REFUSED_MOVE_KEEPS_RUN,
            )
    # One traced walk, for the sequence diagram: pending -> running -> done, then refused.
    run_id = runs[0]
    walk = (RunStatus.PENDING, RunStatus.RUNNING, RunStatus.DONE, RunStatus.RUNNING)
    for current, target in itertools.pairwise(walk):
        with contextlib.suppress(RefusedError):
            ctx.store("transition", run_id, current, target, actor="worker")
    if went_through:
        raise moves_went_through(went_through, hint)


def move_call(run_id: str, step: tuple[str, str]) -> dict[str, Any]:
    """The store request for one step of a walk."""
    return store_call("transition", run_id, step[0], step[1], actor="worker")


def refused_move(current: str, target: str, error: RefusedError, hint: Hint) -> CheckFailedError:
    """The failure for a move the lesson allows that the tree refused."""
    if (current, target) == (RunStatus.PENDING, RunStatus.FAILED):
        wanted = _("pending -> failed to be allowed (a run may fail before it ever runs)")
    else:
        wanted = _("{current} -> {target} to be allowed").format(current=current, target=target)
    return CheckFailedError(wanted, error.describe(), hint, (refuses(current, target),))


def moves_went_through(moves: list[str], hint: Hint) -> CheckFailedError:
    """The failure for moves the lesson refuses that went through, the worst one named first.

    It names the rule of each such move, so a class report lists the learner under every
    one; when all of them went through, one rule instead: the allowlist refuses none.
    """
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
    broken = tuple(lets(*move.split(" -> ")) for move in sorted(moves, key=lesson_order))
    refused_by_the_lesson = sum(len(STATUSES) - len(LESSON_MOVES[s]) for s in STATUSES)
    if len(set(moves)) == refused_by_the_lesson:
        broken = (LETS_EVERY_MOVE,)
    return CheckFailedError(
        _("IllegalTransitionError for {move}").format(move=worst), got, hint, broken
    )


def lesson_order(move: str) -> tuple[bool, bool, bool, int, int]:
    """Which wrong move to name first: out of a terminal state, to running, never a self-move."""
    current, _arrow, target = move.partition(" -> ")
    terminal = not LESSON_MOVES.get(current, frozenset({""}))
    return (
        not terminal,
        current == target,
        target != RunStatus.RUNNING,
        STATUSES.index(current),
        STATUSES.index(target),
    )
