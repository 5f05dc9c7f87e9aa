"""Threads that take turns, a line of the tree's code each: how a burst makes its races.

A burst (ops.py) sends the same request on n threads at once. A race shows when the
threads stop between two lines of the tree: a lookup and an insert not done under one
lock are then caught in between. So the threads take turns, in a fixed order: each
runs one line of the tree's code, then hands the turn to the next thread waiting for
it. The first line waits until every thread has reached the tree, so every thread
runs the lookup before any runs the insert, on every run, however busy the machine.

A thread may stop where it stands: blocked on the tree's own lock, or waiting for
Postgres. The kernel says which threads are stopped and which can run (the state in
/proc/self/task/<id>/stat), so no guess is made from the clock. But a thread that
waits for Python's own lock (the GIL, which the burst's threads pass between them
every few microseconds) looks stopped to the kernel too, though it will run as soon
as it has it. So a thread counts as stopped only when the kernel has said so at every
look for PATIENCE seconds (waits in which it could have taken the GIL many times over)
while it stood at the same instruction of the same frame; and never while it is here,
in line(), on its way to the turn:

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

import sys
import threading
import time

LOOK_EVERY = 0.0005  # seconds between looks at a thread that may have stopped
# How long a thread must have stood still, stopped, to count as stopped (without /proc: how long
# the turn may stay with a thread before it counts as stopped).
PATIENCE = 0.002


class Turns:
    """The turn among count threads, numbered 0 to count - 1."""

    def __init__(self, count: int) -> None:
        self._lock = threading.Lock()
        self._woken = [threading.Condition(self._lock) for _ in range(count)]
        self._count = count
        self._ids: dict[int, int] = {}  # thread number -> the kernel's id of the thread
        self._idents: dict[int, int] = {}  # thread number -> Python's id of the thread
        # Whether each thread is in line(): set before it takes self._lock, so a thread
        # waiting for that lock (or for the GIL once handed the turn) is never taken as stopped.
        self._in_line = [False] * count
        # Where each thread stood when the kernel first said it had stopped there, and when.
        self._looked: dict[int, tuple[object, float]] = {}
        self._running = set(range(count))  # the threads that have not left
        self._waiting: set[int] = set()
        self._holder: int | None = None  # None until every thread has reached the tree
        self._moved_at = time.monotonic()

    def enter(self, me: int) -> None:
        """Thread me is about to start: note the kernel's and Python's ids for it."""
        with self._lock:
            self._ids[me] = threading.get_native_id()
            self._idents[me] = threading.get_ident()

    def line(self, me: int) -> None:
        """Thread me is about to run a line of the tree: hand the turn on, wait for it back."""
        self._in_line[me] = True
        try:
            self._take_turn(me)
        finally:
            self._in_line[me] = False

    def _take_turn(self, me: int) -> None:
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
                elif me not in self._waiting:
                    continue  # handed the turn and passed over meanwhile: wait for it again
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
        if self._in_line[holder]:
            return  # handed the turn, and on its way to take it
        state = self._state(holder)
        if state == "?":  # the kernel does not say: the clock decides
            stopped = time.monotonic() - self._moved_at >= PATIENCE
        else:
            stopped = self._stopped(holder, state)
        if stopped:
            self._give(self._next(holder))

    def _others_stopped(self, me: int | None, waited: bool) -> bool:
        """Whether every thread but me that is neither waiting nor gone has stopped (where
        the kernel does not say: whether they were waited for)."""
        others = self._running - self._waiting - {me}
        if any(self._in_line[t] for t in others):
            return False  # on its way to wait for the turn
        states = {t: self._state(t) for t in others}
        return all(
            waited if state == "?" else self._stopped(t, state) for t, state in states.items()
        )

    def _stopped(self, thread: int, state: str) -> bool:
        """Whether the kernel has said thread was stopped, at the same instruction of the same
        frame, at every look for PATIENCE seconds: not a thread that only waited for the GIL."""
        frame = sys._current_frames().get(self._idents.get(thread, -1))
        place = (id(frame), frame.f_lasti) if frame is not None else None
        now = time.monotonic()
        last = self._looked.get(thread)
        if state == "R" or last is None or last[0] != place:
            self._looked[thread] = (place, now)  # it ran since: it has stopped here only now
            return False
        return state != "R" and now - last[1] >= PATIENCE

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
