"""What a live page shows, part by part, and what changed since an earlier answer.

The runs view draws its live section as a few parts (notices, the executor's
line, the graph, the table's frame, the journal) and one row per run. Each
answer remembers what it drew under a digest, which the page hands back with
its next poll or button. The next answer then sends only the parts and rows
whose drawing differs, swapped in out of band: the rest of the page, and the
focus and scroll position in it, stay as they are. A digest the server no
longer remembers gets the whole section, as the first answer did.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

# Drawings remembered: enough for a few tabs and languages polling the same bench.
REMEMBERED = 64


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Drawing:
    """One answer's parts and rows, drawn: names to HTML, and the rows in their order."""

    parts: dict[str, str]
    rows: list[tuple[str, str]]  # (run id, the row's HTML), in the order shown

    def fingerprint(self) -> Seen:
        return Seen(
            {name: _hash(text) for name, text in self.parts.items()},
            [(run_id, _hash(text)) for run_id, text in self.rows],
        )


@dataclass(frozen=True)
class Seen:
    """What a page shows, as hashes: enough to tell what changed, small enough to remember."""

    parts: dict[str, str]
    rows: list[tuple[str, str]]

    @property
    def digest(self) -> str:
        return _hash(repr((sorted(self.parts.items()), self.rows)))


@dataclass
class Changes:
    """What to send a page that shows `before` for it to show `now`."""

    parts: list[str] = field(default_factory=list)  # names of parts drawn again, whole
    added: list[str] = field(default_factory=list)  # run ids to put on top, in order
    changed: list[str] = field(default_factory=list)  # run ids whose row is drawn again
    removed: list[str] = field(default_factory=list)  # run ids whose row goes


def changes(before: Seen, now: Seen, *, rows_in: str) -> Changes:
    """The parts and rows that differ; the rows' own part (rows_in) whole if they moved.

    Rows are sent one by one when the new order is new runs on top of the old rows
    that stayed, in their order: the way a table newest first grows. Any other
    change of order, or a change of the frame the rows sit in, sends rows_in whole.
    """
    found = Changes(parts=[name for name, h in now.parts.items() if before.parts.get(name) != h])
    if rows_in in found.parts:
        return found
    old, new = dict(before.rows), dict(now.rows)
    added = [run_id for run_id, _h in now.rows if run_id not in old]
    stayed = [run_id for run_id, _h in before.rows if run_id in new]
    if [run_id for run_id, _h in now.rows] != added + stayed:
        found.parts.append(rows_in)
        return found
    found.added = added
    found.changed = [run_id for run_id in stayed if old[run_id] != new[run_id]]
    found.removed = [run_id for run_id, _h in before.rows if run_id not in new]
    return found


class Remembered:
    """The latest drawings' fingerprints, by digest, safe across threads."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self._seen: OrderedDict[str, Seen] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def remember(self, seen: Seen) -> str:
        """Keep seen and return its digest, the token a page hands back."""
        digest = seen.digest
        with self._lock:
            self._seen[digest] = seen
            self._seen.move_to_end(digest)
            while len(self._seen) > self._size:
                self._seen.popitem(last=False)
        return digest

    def get(self, digest: str | None) -> Seen | None:
        with self._lock:
            return self._seen.get(digest) if digest else None
