"""Marking, in a check's trace, the answers where the lesson's rule was broken.

A failing check's diagram is the moment a learner most needs it, so the
arrow where the tree let something through is marked as such: the repeat
that made a second run, the move the allowlist forbids that went through,
the second message stored at one seq, the key that changed for the same
arguments. The marks are kept in the host, beside the trace they mark, and
are for the eye only: verdicts come from the driver's own reading.

A mark is a note on an arrow of kind "through" (trace.py's Arrow.THROUGH):
an English msgid from NOTES that each front end words in its own language,
so a trace carries no sentence in the language of whoever ran it.
"""

from __future__ import annotations

import threading
from enum import Enum
from typing import Any

from labs.lesson.states import LESSON_MOVES
from labs.term.i18n import N_

INSERTED = N_("inserted")
EXISTING = N_("existing row, nothing inserted")
SECOND_RUN = N_("a second run for a request already sent")
SECOND_ROW = N_("a second row for a key already stored")
FORBIDDEN = N_("a move the allowlist forbids, and it went through")
SECOND_SEQ = N_("a second message stored at this seq")
NEW_KEY = N_("another key than before for the same arguments")
# The driver's own note, on the arrow it adds where a call never came back.
NO_ANSWER = N_("no answer: stopped at the time limit")
# Every note a trace may carry: a host that sends another one has it dropped.
NOTES = (INSERTED, EXISTING, SECOND_RUN, SECOND_ROW, FORBIDDEN, SECOND_SEQ, NEW_KEY, NO_ANSWER)


def _word(value: object) -> str:
    """A status (an enum, or its name) as plain text."""
    return str(value.value) if isinstance(value, Enum) else str(value)


class Marks:
    """What one check's calls have done so far, to recognise the answer that breaks a rule."""

    def __init__(self) -> None:
        self._runs: dict[tuple[str, str], object] = {}  # (session, clientMessageId) -> runId
        self._keys: dict[tuple[object, ...], str] = {}  # key arguments -> the key they gave
        self._stored_keys: set[str] = set()
        self._seqs: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def store(self, name: str, args: tuple[Any, ...], result: object) -> str:
        """The note marking a store method's answer ("" for a plain one)."""
        with self._lock:
            if name == "transition" and len(args) == 3:
                source, target = _word(args[1]), _word(args[2])
                if target not in LESSON_MOVES.get(source, frozenset({target})):
                    return FORBIDDEN
            if name == "append_message" and len(args) == 5:
                place = (str(args[1]), int(args[4]) if isinstance(args[4], int) else -1)
                if place in self._seqs:
                    return SECOND_SEQ
                self._seqs.add(place)
            if name == "create_run" and len(args) == 3 and getattr(result, "created", False):
                if str(args[2]) in self._stored_keys:
                    return SECOND_ROW
                self._stored_keys.add(str(args[2]))
        return ""

    def chat(self, body: object, status: int, answer: object, replayed: bool) -> str:
        """The note marking a POST /chat answer: a second run for a repeated request."""
        fields = body if isinstance(body, dict) else {}
        run_id = answer.get("runId") if isinstance(answer, dict) else None
        client_id = fields.get("clientMessageId")
        if status != 202 or run_id is None or not client_id or replayed:
            return ""
        request = (str(fields.get("sessionId")), str(client_id))
        with self._lock:
            first = self._runs.setdefault(request, run_id)
        return SECOND_RUN if first != run_id else ""

    def key(self, arguments: tuple[object, ...], key: str) -> str:
        """The note marking idempotency_key_for's answer: another key for the same call."""
        with self._lock:
            first = self._keys.setdefault(arguments, key)
        return NEW_KEY if first != key else ""
