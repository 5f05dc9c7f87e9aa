"""One heavy job of each kind at a time: a second one gets a clear "busy" answer.

A race opens one Postgres connection per request and a check run starts
processes; started side by side on demand, a few clicks exhaust the
database's connections or the machine's cores.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Literal

from labs.term.i18n import N_

from ..i18n import Sentence, _

# The kinds of heavy job: a check run (or the review checklist's, which runs the checks too),
# and a race.
JobKind = Literal["checks", "race"]
# How each kind of job is named in the busy answer.
KINDS: dict[JobKind, str] = {"checks": N_("a check run"), "race": N_("a race")}


class BusyError(Exception):
    """A job of this kind is already going; the message says which and since when."""


class HeavyJobs:
    """Which kinds of heavy job are going now, and what each one is."""

    def __init__(self) -> None:
        # kind -> (what, started at); what is worded by the page that is told it is busy
        self._going: dict[JobKind, tuple[str | Sentence, str]] = {}
        self._lock = threading.Lock()

    def claim(self, kind: JobKind, what: str | Sentence) -> None:
        """Take the kind's one slot for what, or raise BusyError naming the job holding it."""
        with self._lock:
            if kind in self._going:
                holder, since = self._going[kind]
                raise BusyError(
                    _(
                        "{job} is already going ({holder}, started at {since}); the "
                        "dashboard runs one at a time: wait for it to finish, then try again",
                        job=_(KINDS[kind]) if kind in KINDS else kind,
                        holder=holder,
                        since=since,
                    )
                )
            self._going[kind] = (what, datetime.now().strftime("%H:%M:%S"))

    def release(self, kind: JobKind) -> None:
        """Free the kind's slot (harmless if it was free)."""
        with self._lock:
            self._going.pop(kind, None)

    def going(self, kind: JobKind) -> str | Sentence:
        """What holds the kind's slot now, or an empty string."""
        with self._lock:
            return self._going.get(kind, ("", ""))[0]

    @contextmanager
    def hold(self, kind: JobKind, what: str | Sentence) -> Iterator[None]:
        """Claim the slot for the duration of a with block."""
        self.claim(kind, what)
        try:
            yield
        finally:
            self.release(kind)
