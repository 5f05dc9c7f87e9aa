"""Slow agent work, simulated, and the two places it can run.

An agent run mostly waits on a model: here it sleeps BENCH_AGENT_SECONDS for
the message SLOW_MESSAGE and does nothing for any other. It runs either in
worker threads of a process of its own (the split: python -m
labs.bench.agent) or inside the request handler (the monolith: see inline.py).
Either way it takes the run with a compare-and-set claim and marks it done.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import signal
import threading
import time
from types import ModuleType

SLOW_MESSAGE = "slow agent run"


def agent_seconds(message: str) -> float:
    """How long the simulated agent works on this message."""
    if message != SLOW_MESSAGE:
        return 0.0
    return float(os.environ.get("BENCH_AGENT_SECONDS", "2"))


def tree_modules(tree: str) -> tuple[ModuleType, ModuleType, ModuleType]:
    """The tree's infra, states and errors modules."""
    return (
        importlib.import_module(f"{tree}.infra"),
        importlib.import_module(f"{tree}.shared.states"),
        importlib.import_module(f"{tree}.shared.errors"),
    )


def execute(
    store: object, states: ModuleType, errors: ModuleType, run_id: str, message: str
) -> bool:
    """Claim the run (pending -> running), do the work, finish it; False if another took it."""
    status = states.RunStatus
    try:
        store.transition(run_id, status.PENDING, status.RUNNING)  # type: ignore[attr-defined]
    except errors.TransitionConflictError:
        return False
    time.sleep(agent_seconds(message))
    store.transition(run_id, status.RUNNING, status.DONE)  # type: ignore[attr-defined]
    return True


def work(tree: str, threads: int, stop: threading.Event) -> None:
    """Worker threads: poll pending runs, claim one, work it, repeat until stop is set."""
    infra, states, errors = tree_modules(tree)
    store = infra.make_store()

    def loop() -> None:
        idle = 0.02
        while not stop.is_set():
            pending = store.pending_runs(64)
            random.shuffle(pending)  # fewer collisions between threads polling together
            if any(execute(store, states, errors, r.id, r.input) for r in pending[:4]):
                idle = 0.02
            else:
                # Nothing to take: wait, longer each time, so that idle threads do not
                # spend the CPU the gateway being measured needs.
                stop.wait(idle)
                idle = min(idle * 2, 0.25)

    workers = [threading.Thread(target=loop, daemon=True) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def main() -> None:
    """python -m labs.bench.agent --tree T --threads N: work until SIGTERM."""
    parser = argparse.ArgumentParser(prog="python -m labs.bench.agent")
    parser.add_argument("--tree", default="solution")
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    work(args.tree, args.threads, stop)


if __name__ == "__main__":
    main()
