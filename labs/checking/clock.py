"""The host's clock: what time the tree's code reads, set by the driver.

Check 3 judges a key by what it returns at chosen moments. Passing `now=` moves
only a key that uses it; a key that calls time.time() itself would never move.
So the host moves the clock of its whole process (time-machine patches
time.time, time.time_ns, time.gmtime, datetime.now and their kin at the C
level), and every clock call the tree makes reads the moment the driver chose.
The clock stands still there (tick=False) until the driver moves or stops it.
time.monotonic and time.sleep are left alone, so the host's own timeouts hold.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def hidden(*names: str) -> Iterator[None]:
    """While inside, importing any of names fails as if it were not installed, unless it has
    been imported already: a None in sys.modules makes an import fail (the import system's
    own rule)."""
    absent = [name for name in names if name not in sys.modules]
    for name in absent:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in absent:
            del sys.modules[name]


# time-machine imports pytest (for its fixture) and dateutil (to read a date given as text)
# whenever it can: nothing a host uses, and longer to import than the rest of the host. A
# process that has imported them already (the kit's tests) keeps them.
with hidden("pytest", "dateutil"):
    import time_machine

# Moments the driver may choose: after 1970, before 2200 (seconds since the epoch).
EARLIEST, LATEST = 0.0, 7.3e9


class HostClock:
    """The process's clock: the real one, or stopped at a moment the driver chose."""

    def __init__(self) -> None:
        self._travel: time_machine.travel | None = None
        self.at: float | None = None  # the moment the clock stands at, None when it runs

    def set(self, at: Any) -> None:
        """Read `at` (seconds since the epoch) from now on, or the real clock when at is None."""
        if at is not None and not (
            isinstance(at, int | float)
            and not isinstance(at, bool)
            and math.isfinite(at)
            and EARLIEST <= at <= LATEST
        ):
            raise ValueError(f"not a moment: {at!r}")
        if self._travel is not None:
            self._travel.stop()
            self._travel, self.at = None, None
        if at is not None:
            travel = time_machine.travel(float(at), tick=False)
            travel.start()
            self._travel, self.at = travel, float(at)
