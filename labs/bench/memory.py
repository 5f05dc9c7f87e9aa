"""The memory-store part: what create_run and append_message cost on a small and a big store.

An index makes a uniqueness check cost the same at 10 rows as at 100,000; a
scan makes it grow with the rows. The part fills a MemoryStore to each size
through its own methods, then times a batch of further calls. Filling a
scanning store is quadratic, so the fill stops at a time budget and the
report says how many rows it reached.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BATCH = 500  # calls timed at each size


@dataclass(frozen=True)
class MemoryCost:
    """Per-call cost of one operation at one store size."""

    operation: str
    rows: int  # rows the store held when the timed batch began
    target_rows: int  # rows asked for (more than rows when the fill ran out of time)
    per_call_us: float


def measure_memory_store(tree: str, sizes: list[int], fill_budget: float) -> list[MemoryCost]:
    """create_run and append_message per-call cost at each size, each on a fresh store."""
    store_class = importlib.import_module(f"{tree}.infra").MemoryStore
    return [cost for size in sizes for cost in _at_size(store_class(), size, fill_budget)]


def _at_size(store: Any, size: int, budget: float) -> list[MemoryCost]:
    session_id = store.create_session("bench", "memory").id
    run_id = store.create_run(session_id, "bench", "fill-run").run.id

    def new_run(label: str) -> Callable[[int], object]:
        return lambda n: store.create_run(session_id, "bench", f"{label}-{n}")

    def new_message(first_seq: int) -> Callable[[int], object]:
        return lambda n: store.append_message(session_id, run_id, "user", "m", first_seq + n)

    runs = _fill(new_run("fill"), size, budget)
    messages = _fill(new_message(0), size, budget)
    return [
        _timed("create_run", runs, size, new_run("timed"), budget / 4),
        _timed("append_message", messages, size, new_message(size), budget / 4),
    ]


def _fill(add: Callable[[int], object], size: int, budget: float) -> int:
    """Call add(n) for n in 0..size-1, stopping when budget seconds have gone; return the count."""
    deadline = time.perf_counter() + budget
    for n in range(size):
        if n % 256 == 0 and time.perf_counter() > deadline:
            return n
        add(n)
    return size


def _timed(
    operation: str, rows: int, target: int, call: Callable[[int], object], budget: float
) -> MemoryCost:
    """Time up to BATCH calls (fewer if budget seconds run out) and report the mean."""
    started = time.perf_counter()
    calls = 0
    while calls < BATCH and (calls < 5 or time.perf_counter() - started < budget):
        call(calls)
        calls += 1
    elapsed = time.perf_counter() - started
    return MemoryCost(operation, rows, target, round(elapsed / calls * 1e6, 1))
