"""The one-sentence result of a dashboard button."""

from __future__ import annotations

from dataclasses import dataclass

from .i18n import Sentence


@dataclass(frozen=True)
class Outcome:
    """What the last button did, in one sentence; tone is ok, replay, refused or warn.

    replay is the blue ↺ of the timeline: the same run came back, nothing was inserted.
    The sentence is worded by each page that shows it (the banner stays until the next
    button), in that page's language.
    """

    tone: str
    text: Sentence


# The mark shown before an outcome, so its tone is never told by colour alone.
MARKS = {"ok": "✓", "replay": "↺", "refused": "✗", "warn": "⚠"}
