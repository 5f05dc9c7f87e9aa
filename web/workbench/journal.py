"""What happened to each run, as the dashboard saw it.

The Store keeps a run's current status and no history, and it never
records what it refused; the dashboard writes down every attempt it makes
(and the demo executor's) so the graph and the timeline can show both.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from labs.term.i18n import N_

from ..i18n import Sentence, Verbatim

# Who made an attempt, as the timeline names them (translated where it is shown).
ACTORS = (N_("gateway"), N_("demo worker"), N_("dashboard"))


class Action(StrEnum):
    """What an attempt tried: create a run, move it, write a message; or, for STORE, what
    happened to the store itself (it went away, or came back)."""

    CREATE = "create"
    TRANSITION = "transition"
    MESSAGE = "message"
    STORE = "store"


class AttemptOutcome(StrEnum):
    """What came of an attempt, as the store answered it."""

    ACCEPTED = "accepted"  # the store took it
    REFUSED = "refused"  # the store raised
    REPLAYED = "replayed"  # the same run came back
    # The store took a move the lesson's allowlist forbids (the starter's bug, shown).
    ILLEGAL = "illegal"
    DUPLICATE = "duplicate"  # the store took a second message at a seq it already had
    # The store stopped answering the demo executor, and answered again.
    UNAVAILABLE = "unavailable"
    RESUMED = "resumed"


@dataclass(frozen=True)
class Entry:
    """One attempt on one run."""

    run_id: str
    actor: str  # gateway, demo worker, dashboard
    action: Action
    outcome: AttemptOutcome
    # The dashboard's words, worded by the page that shows them; or the tree's own words
    # (an exception's message, a message's content), shown as they are.
    detail: Sentence | Verbatim
    source: str | None = None
    target: str | None = None
    seq: int | None = None
    duplicates: str | None = None  # a run created again for one request: the first run
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def time(self) -> str:
        """Wall-clock time with milliseconds, for the timeline."""
        return self.at.strftime("%H:%M:%S.%f")[:-3]


class Journal:
    """Entries in the order they were written, safe across threads."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._lock = threading.Lock()

    def add(self, entry: Entry) -> Entry:
        """Append one entry and return it."""
        with self._lock:
            self._entries.append(entry)
        return entry

    @property
    def count(self) -> int:
        """How many entries there are: it grows with every attempt."""
        with self._lock:
            return len(self._entries)

    def entries(self, run_id: str | None = None) -> list[Entry]:
        """Every entry, or only those of one run, oldest first."""
        with self._lock:
            found = list(self._entries)
        return [e for e in found if run_id is None or e.run_id == run_id]

    def recent(self, limit: int = 12) -> list[Entry]:
        """The newest entries, newest first."""
        return list(reversed(self.entries()[-limit:]))

    def edge_counts(self) -> dict[tuple[str, str], Counter[AttemptOutcome]]:
        """For each (from, to) transition attempted, how many ended in each outcome."""
        counts: dict[tuple[str, str], Counter[AttemptOutcome]] = {}
        for entry in self.entries():
            if entry.action == Action.TRANSITION and entry.source and entry.target:
                counts.setdefault((entry.source, entry.target), Counter())[entry.outcome] += 1
        return counts
