"""The checks' inputs: a stream no tree can read ahead, which a printed seed replays.

A run draws a 64-bit seed from `secrets` (or takes --seed N / LAB_SEED=N).
Every input is taken from HMAC-SHA256(key, counter), where the key is derived
from the seed and stays in the driver: the host sees tokens and texts, never
the key, and no number of outputs lets it compute the next one (a Mersenne
Twister, `random.Random`'s own generator, gives its state away after 624
outputs, and a 20-bit seed is found by trying them all in seconds).

KeyedRandom is a `random.Random` whose basic generator is that stream, as
the standard library's documentation describes subclassing it, so `sample`,
`randrange` and `shuffle` work as before. A forked host gets a copy of the
driver's memory, so each KeyedRandom wipes its key in a forked child before
any of the tree's code runs there.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
import weakref
from typing import Any

SEED_BITS = 64
_LIVE: weakref.WeakSet[KeyedRandom] = weakref.WeakSet()


def fresh_seed() -> int:
    """A seed for one run, 64 bits from the operating system's secure source."""
    return secrets.randbits(SEED_BITS)


def key_for(seed: int) -> bytes:
    """The stream's key for a seed (any size of integer), which never leaves the driver."""
    return hashlib.sha256(f"mini-koda lab inputs\x00{seed}".encode()).digest()


class KeyedRandom(random.Random):
    """random.Random over HMAC-SHA256(key, counter): same seed, same inputs; no look-ahead."""

    def __init__(self, seed: int = 0) -> None:
        self._key = bytearray(32)
        self._counter = 0
        self._pool = b""
        super().__init__(seed)
        _LIVE.add(self)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Start the stream over from seed a (a fresh secret one when None)."""
        value = fresh_seed() if a is None else int(a)
        self._key[:] = key_for(value)
        self._counter, self._pool = 0, b""

    def _bytes(self, n: int) -> bytes:
        """The next n bytes of the stream."""
        while len(self._pool) < n:
            block = self._counter.to_bytes(8, "big")
            self._pool += hmac.digest(bytes(self._key), block, "sha256")
            self._counter += 1
        taken, self._pool = self._pool[:n], self._pool[n:]
        return taken

    def getrandbits(self, k: int) -> int:
        """k bits of the stream."""
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        if k == 0:
            return 0
        value = int.from_bytes(self._bytes((k + 7) // 8), "big")
        return value >> (-k % 8)

    def random(self) -> float:
        """A float in [0, 1) from 53 bits of the stream."""
        return self.getrandbits(53) * (2.0**-53)

    def getstate(self) -> Any:
        """Not offered: the state is the key, which stays where it is."""
        raise NotImplementedError("a KeyedRandom's state is its key: replay a run by its seed")

    def setstate(self, state: Any) -> None:
        """Not offered (see getstate)."""
        raise NotImplementedError("a KeyedRandom's state is its key: replay a run by its seed")

    def wipe(self) -> None:
        """Forget the key in place and continue from one nobody knows."""
        self._key[:] = secrets.token_bytes(len(self._key))
        self._pool = b""


def _wipe_all() -> None:
    for stream in list(_LIVE):
        stream.wipe()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_wipe_all)
