"""A run's messages as a strip ordered by seq, with duplicates, refusals and gaps marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .i18n import _
from .journal import Entry


@dataclass(frozen=True)
class Cell:
    """One place in the strip: a stored message, a refused attempt, or a missing seq."""

    seq: int
    kind: str  # message, duplicate (stored twice), refused (attempt stopped), gap
    role: str
    content: str

    @property
    def tag(self) -> str:
        """The words that say what the cell is, so colour is not the only sign (in the page's
        language: the template reads it)."""
        if self.kind == "message":
            return ""
        return {
            "duplicate": _("DUPLICATE seq"),
            "refused": _("REFUSED attempt"),
            "gap": _("GAP: no message"),
        }[self.kind]


def message_strip(messages: Sequence[Any], attempts: Sequence[Entry]) -> list[Cell]:
    """Lay out stored messages by seq, mark second rows at a seq, refusals and gaps."""
    cells: list[Cell] = []
    seen: set[int] = set()
    for message in sorted(messages, key=lambda m: m.seq):
        kind = "duplicate" if message.seq in seen else "message"
        cells.append(Cell(message.seq, kind, message.role, message.content))
        seen.add(message.seq)
    for entry in attempts:
        if entry.action == "message" and entry.outcome == "refused" and entry.seq is not None:
            cells.append(Cell(entry.seq, "refused", "", str(entry.detail)))
    if seen:
        cells += [Cell(seq, "gap", "", "") for seq in range(max(seen)) if seq not in seen]
    order = {"message": 0, "duplicate": 1, "refused": 2, "gap": 0}
    return sorted(cells, key=lambda c: (c.seq, order[c.kind]))
