"""Threads that take turns, a line of the tree's code each: how a burst makes its races.

A burst (ops.py) sends the same request on n threads at once. A race shows when the
threads stop between two lines of the tree: a lookup and an insert not done under one
lock are then caught in between. So the threads take turns, in a fixed order: each
runs one line of the tree's code, then hands the turn to the next thread waiting for
it. The first line waits until every thread has reached the tree, so every thread
runs the lookup before any runs the insert, on every run, however busy the machine.

A thread may stop where it stands: blocked on the tree's own lock, or waiting for
Postgres. The kernel says which threads are stopped and which can run (the state in
/proc/self/task/<id>/stat), so no guess is made from the clock:

- the turn passes over a stopped thread, and comes back to it once it runs again;
- a thread that holds the turn but has stopped gives it to the next one waiting;
- a thread with nobody waiting for the turn runs on alone only while the others are
  stopped: one that can run (just woken by a lock the tree released, say) gets the
  turn first, so it takes that lock before the thread that released it can take it
  back.

Where the kernel does not say (no /proc), the clock stands in, as best it can: a
thread that has not handed the turn on within PATIENCE seconds counts as stopped,
and a thread with nobody waiting for the turn gives the others LOOK_EVERY seconds
to come before it runs on.
"""

from __future__ import annotations

import threading
import time

LOOK_EVERY = 0.0005  # seconds between looks at a thread that may have stopped
PATIENCE = 0.002  # without /proc: how long the turn may stay with a thread that stopped


class Turns:
    """The turn among count threads, numbered 0 to count - 1."""

    def __init__(self, count: int) -> None:
        self._lock = threading.Lock()
        self._woken = [threading.Condition(self._lock) for _ in range(count)]
        self._count = count
        self._ids: dict[int, int] = {}  # thread number -> the kernel's id of the thread
        self._running = set(range(count))  # the threads that have not left
        self._waiting: set[int] = set()
        self._holder: int | None = None  # None until every thread has reached the tree
        self._moved_at = time.monotonic()

    def enter(self, me: int) -> None:
        """Thread me is about to start: note the kernel's id for it."""
        with self._lock:
            self._ids[me] = threading.get_native_id()

    def line(self, me: int) -> None:
        """Thread me is about to run a line of the tree: hand the turn on, wait for it back."""
        with self._lock:
            if self._holder == me:
                waited = False
                while not self._waiting and not self._others_stopped(me, waited):
                    self._woken[me].wait(LOOK_EVERY)  # one of them is on its way here
                    waited = True
                if not self._waiting:
                    return  # everyone else is stopped or gone: run on
                self._give(self._next(me))
            if self._holder is not None:
                self._woken[self._holder].notify()  # it may be waiting for someone to come
            while self._holder != me:
                self._waiting.add(me)  # again if the turn came and was taken back
                if self._holder is None and self._waiting >= self._running:
                    self._give(min(self._waiting))  # the first line, once all are here
                elif self._woken[me].wait(LOOK_EVERY) or self._holder == me:
                    continue
                elif self._next(self._holder) == me:
                    self._take_if_stopped()

    def leave(self, me: int) -> None:
        """Thread me has finished: it takes no more turns."""
        with self._lock:
            self._running.discard(me)
            self._waiting.discard(me)
            if self._holder == me:
                self._holder = None
                if self._waiting:
                    self._give(self._next(me))
            elif self._holder is None and self._waiting and self._waiting >= self._running:
                self._give(min(self._waiting))

    def _take_if_stopped(self) -> None:
        """Called by the next thread in turn when the turn has not moved for a while."""
        holder = self._holder
        if holder is None:  # not everyone has reached the tree: start without the stopped
            if self._others_stopped(None, waited=True):
                self._give(min(self._waiting))
            return
        state = self._state(holder)
        if state == "?":  # the kernel does not say: the clock decides
            state = "R" if time.monotonic() - self._moved_at < PATIENCE else "S"
        if state != "R":
            self._give(self._next(holder))

    def _others_stopped(self, me: int | None, waited: bool) -> bool:
        """Whether every thread but me that is neither waiting nor gone has stopped (where
        the kernel does not say: whether they were waited for)."""
        states = [self._state(t) for t in self._running - self._waiting - {me}]
        return all(state != "R" and (waited or state != "?") for state in states)

    def _state(self, thread: int) -> str:
        """The kernel's state of the thread: R when it runs or can, S or D when it has
        stopped; ? when /proc does not say."""
        try:
            with open(f"/proc/self/task/{self._ids[thread]}/stat", "rb") as stat:
                text = stat.read()
            return chr(text[text.rindex(b")") + 2])
        except (KeyError, OSError, ValueError, IndexError):
            return "?"

    def _next(self, after: int | None) -> int:
        """The first waiting thread after `after` in turn order (the first of all: None)."""
        start = -1 if after is None else after
        return min(self._waiting, key=lambda t: (t - start - 1) % self._count)

    def _give(self, thread: int) -> None:
        self._holder = thread
        self._moved_at = time.monotonic()
        self._waiting.discard(thread)
        self._woken[thread].notify()
