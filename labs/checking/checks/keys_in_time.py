"""Check 3's judgement of idempotency_key_for alone, at moments the check picks.

The rule, both ways the lesson gives it:
- with a clientMessageId: session + clientMessageId, blind to time;
- without one: session + the text as sent + the time window, so the same text
  in the same window is a retry, while another text (a difference in case or
  spacing included) or another window is a new message.
Either way the key is scoped to its session and is the same in every process
(the gateway is stateless and runs many instances: a second process of the
tree computes the same keys).

Time is moved, never only passed: before each moment's keys the host stops the
clock of its whole process there (clock.py), and each key is asked both without
`now`, as the gateway asks, and with now= that moment. A key that reads the
clock and one that uses `now` are judged alike, whichever clock call they make.
The first moment starts a day (UTC), so a window of TIME_BUCKET_SECONDS (the
tree's, else the lesson's 60 s) starts there whatever its phase, and every
seed gets the same verdict; only the window's length is assumed.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from labs.term.i18n import _

from ..context import CheckContext, expect, expect_all
from ..errors import CheckFailedError, RefusedError
from ..hints import Hint
from ..rules import (
    CLIENT_KEY_CLIENT_ID,
    CLIENT_KEY_SESSION,
    CLIENT_KEY_TIMELESS,
    KEY_NOW,
    KEY_RETURNED,
    KEY_SAME_IN_EVERY_PROCESS,
    KEY_STABLE,
    TEXT_KEY_AS_SENT,
    TEXT_KEY_LATER_WINDOW,
    TEXT_KEY_SESSION,
    TEXT_KEY_TEXT,
    TEXT_KEY_WINDOW,
)

HOUR = 3600.0  # the lesson's "an hour later": never the same window
DAY = 86400.0
FIRST_DAY, LAST_DAY = 18262, 21914  # 2020-01-01 and 2029-12-31, counted from the epoch
SAMPLES = 5  # moments over 0.9 of one window: a key with that window changes at most once


def a_window_start(ctx: CheckContext) -> float:
    """Midnight (UTC) of a day drawn from the run's inputs: a window starts there.

    A window that divides a day (the lesson's minute among them) starts at
    midnight however the key counts it, so the seed picks the day, never the verdict.
    """
    start = ctx.rng.randint(FIRST_DAY, LAST_DAY) * DAY
    window = ctx.bucket_seconds
    return start if (DAY / window).is_integer() else math.floor(start / window) * window


def an_hour_later(ctx: CheckContext) -> float:
    """An hour, or one window when the tree's window is longer: never the same window."""
    return max(HOUR, ctx.bucket_seconds)


def keys_with_a_client_id(
    ctx: CheckContext, mine: str, theirs: str, start: float, hint: Hint
) -> None:
    """Same session and clientMessageId: one key, now, a window later and an hour later."""
    client_id, other_id, text = ctx.token("c"), ctx.token("c"), ctx.text()
    later = [start + ctx.bucket_seconds, start + an_hour_later(ctx)]
    calls = at(
        start,
        ask(mine, client_id, text),
        ask(mine, client_id, text),
        ask(mine, client_id, text, start),
        ask(theirs, client_id, text),
        ask(mine, other_id, text),
    )
    for moment in later:
        calls += at(moment, ask(mine, client_id, text), ask(mine, client_id, text, moment))
    key, again, given_now, theirs_key, other_key, *moved = computed(ctx, calls, hint)
    expect(
        key == again,
        _("idempotency_key_for to return the same key for the same request"),
        _("{first}… then {second}…: the key changes on every call").format(
            first=key[:12], second=again[:12]
        ),
        hint,
        rule=KEY_STABLE,
    )
    # A key that is the same for the same call is judged on each rule at once.
    expect_all(
        hint,
        (
            all(found == key for found in [given_now, *moved]),
            _(
                "the same key now, a window later and an hour later, with or without `now`: "
                "with a clientMessageId, time plays no part"
            ),
            _("a different key once the clock moved on: a retry after a pause makes a second run"),
            CLIENT_KEY_TIMELESS,
        ),
        (
            theirs_key != key,
            _("another key for the same clientMessageId in another session"),
            _("the same key: one session's request would replay another session's run"),
            CLIENT_KEY_SESSION,
        ),
        (
            other_key != key,
            _("another key for another clientMessageId"),
            _("the same key for {one} and {other}: two messages would share one run").format(
                one=client_id, other=other_id
            ),
            CLIENT_KEY_CLIENT_ID,
        ),
    )
    last = later[-1]
    here = [key, *moved[-2:]]
    elsewhere = at(start, ask(mine, client_id, text))
    elsewhere += at(last, ask(mine, client_id, text), ask(mine, client_id, text, last))
    same_in_another_process(ctx, elsewhere, here, hint)


def keys_without_a_client_id(
    ctx: CheckContext, mine: str, theirs: str, start: float, hint: Hint
) -> float:
    """No clientMessageId: the text as sent, its session and the window make the key.

    Returns how long after start the same text still got the same key (the
    gateway's retry is sent then).
    """
    window = ctx.bucket_seconds
    text, other_text = ctx.text(), ctx.text()
    capital, spaced = text.capitalize(), text.replace(" ", "  ", 1)
    inside = [start + i * 0.9 * window / (SAMPLES - 1) for i in range(SAMPLES)]
    moments = [*inside, start + window, start + 2 * window, start + an_hour_later(ctx)]
    calls: list[dict[str, Any]] = []
    for moment in moments:
        calls += at(moment, ask(mine, None, text), ask(mine, None, text, moment))
    calls += at(
        start,
        ask(theirs, None, text),
        ask(mine, None, other_text),
        ask(mine, None, capital),
        ask(mine, None, spaced),
    )
    keys = computed(ctx, calls, hint)
    asked, given = keys[0 : 2 * len(moments) : 2], keys[1 : 2 * len(moments) : 2]
    theirs_key, other_key, capital_key, spaced_key = keys[2 * len(moments) :]
    in_window, (next_one, after_next, later), first = asked[:SAMPLES], asked[SAMPLES:], asked[0]
    changes = sum(a != b for a, b in itertools.pairwise(in_window))
    differ = [(m, a, g) for m, a, g in zip(moments, asked, given, strict=True) if a != g]
    moment, asked_key, given_key = (differ or [(start, "", "")])[0]
    # All judged on the keys in hand: the failure names every rule the key breaks. Case and
    # spacing are judged only for a key that holds the text at all.
    expect_all(
        hint,
        (
            changes <= 1,
            _(
                "without a clientMessageId, the same text sent again within {seconds:g} s "
                "(TIME_BUCKET_SECONDS) to be a retry: the same key"
            ).format(seconds=window),
            _(
                "the key changed {changes} times over {span:g} s: a retry a few seconds later "
                "makes a second run (the time in the key must be the window it falls in)"
            ).format(changes=changes, span=0.9 * window),
            TEXT_KEY_WINDOW,
        ),
        (
            len({first, next_one, after_next}) == 3,
            _(
                "without a clientMessageId, the same text {seconds:g} s and {twice:g} s later "
                "to be a new message each time: a new key in each window"
            ).format(seconds=window, twice=2 * window),
            _(
                "the same key in two windows: the key's window is longer than {seconds:g} s "
                "(TIME_BUCKET_SECONDS), or the key holds no time, so the same words sent again a "
                "window later get the old run back"
            ).format(seconds=window),
            TEXT_KEY_LATER_WINDOW,
        ),
        (
            later != first,
            _(
                "without a clientMessageId, the same text an hour later to be a new message: "
                "a new key"
            ),
            _(
                "the same key: the same words an hour later are taken for a retry and get the "
                "old run back (no time window in the key, or one longer than an hour)"
            ),
            TEXT_KEY_LATER_WINDOW,
        ),
        (
            theirs_key != first,
            _("without a clientMessageId, another key for the same text in another session"),
            _(
                "the same key: another session's \u201c{text}\u201d would get this session's run"
            ).format(text=text),
            TEXT_KEY_SESSION,
        ),
        (
            other_key != first,
            _("without a clientMessageId, another key for another text in the same session"),
            _(
                "the same key for \u201c{one}\u201d and \u201c{other}\u201d: the second message "
                "would be refused with 409 or given the first one's run"
            ).format(one=text, other=other_text),
            TEXT_KEY_TEXT,
        ),
        (
            other_key == first or first not in (capital_key, spaced_key),
            _(
                "without a clientMessageId, another key for a text that differs only in case "
                "or spacing: the text goes into the key as it was sent"
            ),
            _(
                "the same key for \u201c{one}\u201d as for \u201c{capital}\u201d or "
                "\u201c{spaced}\u201d: a message that differs only in case or spacing would be "
                "refused with 409"
            ).format(one=text, capital=capital, spaced=spaced),
            TEXT_KEY_AS_SENT,
        ),
        (
            not differ,
            _(
                "the same key with now=t as without `now` while the clock reads t: the time "
                "comes from `now` when it is given, else from the clock"
            ),
            _("{given}… with now={moment:.1f}, {asked}… from the clock at that moment").format(
                given=given_key[:12], moment=moment, asked=asked_key[:12]
            ),
            KEY_NOW,
        ),
    )
    here = [first, given[0], theirs_key]
    there = at(start, ask(mine, None, text), ask(mine, None, text, start), ask(theirs, None, text))
    same_in_another_process(ctx, there, here, hint)
    return max(m for m, key in zip(inside, in_window, strict=True) if key == first) - start


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
        rule=KEY_SAME_IN_EVERY_PROCESS,
    )


def computed(
    ctx: CheckContext, calls: list[dict[str, Any]], hint: Hint, host: Any = None
) -> list[str]:
    """The keys calls ask for, in order, in one round trip; a key that raised fails the check."""
    replies = ctx.batch(calls, host)
    for reply in replies:
        if isinstance(reply, RefusedError):
            raise CheckFailedError(
                _("idempotency_key_for to return a key"), reply.describe(), hint, (KEY_RETURNED,)
            )
    return [str(reply) for call, reply in zip(calls, replies, strict=True) if call["op"] == "key"]


def at(moment: float, *asks: dict[str, Any]) -> list[dict[str, Any]]:
    """The host's clock stopped at moment, then asks: requests for CheckContext.batch."""
    return [{"op": "clock", "at": moment}, *asks]


def ask(
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
