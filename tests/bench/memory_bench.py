"""What MemoryStore's writes cost with few rows and with many: python -m tests.bench.memory_bench.

The unique rules are dict lookups (the key index, the (run_id, seq) index),
so a write should cost the same at 10 rows as at 100,000. This prints the
microseconds per call of create_run (new key), create_run (a replayed key)
and append_message at each size, median of several rounds.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from typing import Any

SIZES = (10, 100_000)


def filled_store(tree: str, rows: int) -> tuple[Any, str, list[str]]:
    """A MemoryStore holding `rows` runs, each with one message, all in one session."""
    store = importlib.import_module(f"{tree}.infra").MemoryStore()
    session = store.create_session("bench", "bench")
    run_ids = []
    for n in range(rows):
        run = store.create_run(session.id, "filler", f"fill-{n}").run
        store.append_message(session.id, run.id, "user", "filler", 0)
        run_ids.append(run.id)
    return store, session.id, run_ids


def per_call(calls: int, fn: Any) -> float:
    """Processor microseconds per call of fn(i) over `calls` calls (steady on a busy machine)."""
    started = time.process_time()
    for i in range(calls):
        fn(i)
    return (time.process_time() - started) / calls * 1e6


def measure(
    tree: str = "solution", rows: int = 10, calls: int = 1000, rounds: int = 5
) -> dict[str, float]:
    """Median µs per call of the three writes on a store already holding `rows` runs."""
    store, session_id, run_ids = filled_store(tree, rows)
    figures: dict[str, list[float]] = {
        "create_run": [],
        "create_run replay": [],
        "append_message": [],
    }
    target = run_ids[0]
    for r in range(rounds):

        def create(i: int, r: int = r) -> None:
            store.create_run(session_id, "x", f"new-{r}-{i}")

        def append(i: int, r: int = r) -> None:
            store.append_message(session_id, target, "assistant", "y", (r + 1) * calls + i)

        figures["create_run"].append(per_call(calls, create))
        figures["create_run replay"].append(per_call(calls, create))  # the same keys again
        figures["append_message"].append(per_call(calls, append))
    return {name: statistics.median(values) for name, values in figures.items()}


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(prog="python -m tests.bench.memory_bench")
    parser.add_argument("--tree", default="solution")
    args = parser.parse_args()
    print(f"MemoryStore ({args.tree}), µs per call, median of 5 rounds of 1000 calls")
    results = {rows: measure(args.tree, rows) for rows in SIZES}
    names = list(results[SIZES[0]])
    print(f"{'rows':>9}  " + "  ".join(f"{name:>18}" for name in names))
    for rows, figures in results.items():
        print(f"{rows:>9,}  " + "  ".join(f"{figures[name]:>18.1f}" for name in names))


if __name__ == "__main__":
    main()
