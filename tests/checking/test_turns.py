"""When a burst's turn passes over a thread: only when it has really stopped (turns.py).

A thread the kernel shows asleep may only be waiting for Python's GIL, or be on its
way to the turn. Taking either for stopped lets the holder run two lines of the
tree alone, and a lookup outside the lock then goes unseen: a wrong answer passes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from labs.checking.turns import PATIENCE, Turns


@contextmanager
def parked(turns: Turns, number: int, body: Callable[[threading.Event], object]) -> Iterator[None]:
    """Thread number of turns, running body (which blocks) until the block ends."""
    entered, done = threading.Event(), threading.Event()

    def run() -> None:
        turns.enter(number)
        entered.set()
        body(done)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    entered.wait(5)
    try:
        yield
    finally:
        done.set()
        thread.join(5)


def asleep(turns: Turns, number: int) -> None:
    """Wait until the kernel says thread number sleeps."""
    deadline = time.monotonic() + 5
    while turns._state(number) == "R" and time.monotonic() < deadline:
        time.sleep(0.001)


def others_stopped(turns: Turns) -> bool:
    """What thread 0, holding the turn with nobody waiting, sees of the others."""
    with turns._lock:
        return turns._others_stopped(0, waited=True)


def test_a_thread_blocked_in_the_tree_counts_as_stopped_once_it_stood_still_long_enough() -> None:
    """Blocked on a lock (the tree's own, say), it stopped: first seen, then PATIENCE later."""
    turns = Turns(2)
    with parked(turns, 1, lambda done: done.wait(10)):
        asleep(turns, 1)
        assert not others_stopped(turns)  # seen asleep once: it may only wait for the GIL
        time.sleep(PATIENCE * 2)
        assert others_stopped(turns)


def test_a_thread_that_ran_between_two_looks_has_not_stopped() -> None:
    """Asleep at both looks, but at another instruction at the second: it ran in between."""
    turns = Turns(2)
    first, second = threading.Lock(), threading.Lock()
    first.acquire()
    second.acquire()
    moved = threading.Event()

    def two_places(done: threading.Event) -> None:
        first.acquire()  # the first place it stops at
        moved.set()
        second.acquire()  # and the second, in the same frame

    with parked(turns, 1, two_places):
        asleep(turns, 1)
        assert not others_stopped(turns)
        time.sleep(PATIENCE * 2)
        first.release()
        moved.wait(5)
        asleep(turns, 1)
        assert not others_stopped(turns)  # a new place: the time it stood still starts again
        time.sleep(PATIENCE * 2)
        assert others_stopped(turns)
        second.release()


def test_a_thread_on_its_way_to_the_turn_never_counts_as_stopped() -> None:
    """In line(), waiting for the turn's lock or for the GIL once handed the turn, a thread
    sleeps for the kernel: it is coming, and the holder waits for it."""
    turns = Turns(2)
    with parked(turns, 1, lambda done: done.wait(10)):
        turns._in_line[1] = True  # as line() says before it takes the turn's lock
        asleep(turns, 1)
        time.sleep(PATIENCE * 2)
        assert not others_stopped(turns)
        with turns._lock:
            turns._holder = 1  # handed the turn, not awake yet: nobody takes it back
            turns._waiting = {0}
            turns._take_if_stopped()
            assert turns._holder == 1
        turns._in_line[1] = False  # back in the tree, and blocked there
        with turns._lock:
            turns._take_if_stopped()
            assert turns._holder == 1  # seen asleep once
        time.sleep(PATIENCE * 2)
        with turns._lock:
            turns._take_if_stopped()
            assert turns._holder == 0


def test_a_thread_passed_over_while_it_waited_waits_for_its_turn_again() -> None:
    """Handed the turn and passed over before it woke, a thread finds nobody waiting, itself
    included: it waits again (it once failed there, and its request answered 500)."""
    turns = Turns(2)
    errors: list[BaseException] = []

    def second() -> None:
        turns.enter(1)
        try:
            turns.line(1)
        except BaseException as error:
            errors.append(error)

    turns.enter(0)
    with turns._lock:
        turns._holder = 0
    turns._in_line[0] = True  # the holder is on its way: never passed over in this test
    thread = threading.Thread(target=second, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while 1 not in turns._waiting and time.monotonic() < deadline:
        time.sleep(0.001)
    with turns._lock:
        turns._waiting.discard(1)  # handed the turn and taken back, without a word
    time.sleep(PATIENCE * 5)
    with turns._lock:
        assert errors == []
        assert 1 in turns._waiting  # it came back to wait
        turns._give(1)
    thread.join(5)
    assert errors == [] and not thread.is_alive()
