"""The grader parses submissions from several threads: no parse may fail for another's sake."""

from __future__ import annotations

import gc
import sys
import threading
import time

from labs.grading.parsing import parse
from labs.trees.finding import REPO_ROOT

SOURCE = (REPO_ROOT / "labs" / "grading" / "flags.py").read_text(encoding="utf-8")


class Finalised:
    """Garbage only the collector frees (a cycle), whose finaliser lets another thread run."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        time.sleep(0)


def test_parses_from_many_threads_at_once_all_succeed() -> None:
    """Six threads parse while the collector runs finalisers: none fails with a SystemError.

    With ast.parse itself, each such run saw "AST constructor recursion depth
    mismatch" on CPython 3.11 (gh-106905): the grader's parse takes a lock.
    """
    failures: list[str] = []

    def parse_often() -> None:
        for _ in range(300):
            Finalised()
            try:
                parse(SOURCE)
            except SystemError as error:
                failures.append(str(error))

    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(1e-6)
    gc.set_threshold(5)
    try:
        threads = [threading.Thread(target=parse_often) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
    assert failures == []
