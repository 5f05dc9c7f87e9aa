"""The one-sentence result of a dashboard button."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ..i18n import Sentence


class Tone(StrEnum):
    """How a button's result reads: it did what was asked, or not, and what the lesson makes of it.

    REPLAY is the blue ↺ of the timeline: the same run came back, nothing was inserted.
    WARN: the tree let through what the lesson forbids (a move off the allowlist, a second
    message at a seq, a retry or a duplicate that made a new run).
    """

    OK = "ok"
    REPLAY = "replay"
    REFUSED = "refused"
    WARN = "warn"


@dataclass(frozen=True)
class Outcome:
    """What the last button did, in one sentence, and its tone.

    The sentence is worded by each page that shows it (the banner stays until the next
    button), in that page's language.
    """

    tone: Tone
    text: Sentence


# The mark shown before an outcome, so its tone is never told by colour alone.
MARKS = {Tone.OK: "✓", Tone.REPLAY: "↺", Tone.REFUSED: "✗", Tone.WARN: "⚠"}
