"""The one-sentence result of a dashboard button."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Outcome:
    """What the last button did, in one sentence; tone is ok, refused or warn."""

    tone: str
    text: str
