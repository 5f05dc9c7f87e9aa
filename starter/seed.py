"""python -m <tree>.seed: a demo session with three pending runs, for the worker (step 5)."""

import os
import sys

from .infra import make_store
from .shared import errors
from .shared.keys import idempotency_key_for
from .worker.queries import pending_runs

# What a user might have typed; each carries a client message id, as a real client's would.
DEMO_MESSAGES = (
    ("seed-1", "Summarise yesterday's standup notes."),
    ("seed-2", "Draft a reply to the supplier about the late delivery."),
    ("seed-3", "List three risks in the migration plan."),
)


def main() -> int:
    """Seed the configured store the gateway's way, and say where the runs went."""
    try:
        store = make_store()
        session = store.create_session("demo-user", "Seeded demo session")
        # As the gateway does: a key derived from the content, then the store's create_run.
        runs = [
            store.create_run(session.id, text, idempotency_key_for(session.id, client_id, text)).run
            for client_id, text in DEMO_MESSAGES
        ]
    except errors.LabError as error:  # no store configured, database down, tables missing
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"seeded session {runs[0].session_id} with {len(runs)} pending run(s):")
    for run in runs:
        print(f"  {run.id}  {run.status}  {run.input!r}")
    if os.environ.get("MOCK") != "1":
        print(f"now run `python -m {__package__}.worker --once` in another terminal to list them")
        return 0
    waiting = len(pending_runs(store))  # another process would have its own, empty, memory
    print(f"MOCK=1: the worker's query in this process sees {waiting} pending run(s).")
    print("A worker in another process has its own empty memory and would see none (MOCK.md).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
