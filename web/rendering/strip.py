"""A run's messages as a strip ordered by seq, with duplicates, refusals and gaps marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..i18n import _
from ..workbench.journal import Action, AttemptOutcome, Entry


class CellKind(StrEnum):
    """What a place in the strip holds."""

    MESSAGE = "message"  # a stored message
    DUPLICATE = "duplicate"  # a second message stored at a seq
    REFUSED = "refused"  # an attempt the store stopped
    GAP = "gap"  # a seq with no message, below the highest one stored


@dataclass(frozen=True)
class Cell:
    """One place in the strip: a stored message, a refused attempt, or a missing seq."""

    seq: int
    kind: CellKind
    role: str
    content: str

    @property
    def tag(self) -> str:
        """The words that say what the cell is, so colour is not the only sign (in the page's
        language: the template reads it)."""
        if self.kind == CellKind.MESSAGE:
            return ""
        return {
            CellKind.DUPLICATE: _("DUPLICATE seq"),
            CellKind.REFUSED: _("REFUSED attempt"),
            CellKind.GAP: _("GAP: no message"),
        }[self.kind]


def message_strip(messages: Sequence[Any], attempts: Sequence[Entry]) -> list[Cell]:
    """Lay out stored messages by seq, mark second rows at a seq, refusals and gaps."""
    cells: list[Cell] = []
    seen: set[int] = set()
    for message in sorted(messages, key=lambda m: m.seq):
        kind = CellKind.DUPLICATE if message.seq in seen else CellKind.MESSAGE
        cells.append(Cell(message.seq, kind, message.role, message.content))
        seen.add(message.seq)
    for entry in attempts:
        refused = entry.outcome == AttemptOutcome.REFUSED
        if entry.action == Action.MESSAGE and refused and entry.seq is not None:
            cells.append(Cell(entry.seq, CellKind.REFUSED, "", str(entry.detail)))
    if seen:
        cells += [Cell(seq, CellKind.GAP, "", "") for seq in range(max(seen)) if seq not in seen]
    order = {CellKind.MESSAGE: 0, CellKind.DUPLICATE: 1, CellKind.REFUSED: 2, CellKind.GAP: 0}
    return sorted(cells, key=lambda c: (c.seq, order[c.kind]))
