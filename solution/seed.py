"""python -m <tree>.seed: put a demo session with a few pending runs into the store.

The lab's step 5 uses it: seed, then ask the worker what it sees. On Postgres
the runs outlive this process, so `python -m <tree>.worker --once` in another
terminal lists them. Under MOCK=1 they live in this process's memory only,
so the script shows the worker's query here, before they vanish with it.
"""

from __future__ import annotations

import os
import sys

from .infra import make_store
from .infra.store import Store
from .shared.errors import LabError
from .shared.keys import idempotency_key_for
from .shared.say import _
from .shared.schema import Run
from .worker.queries import pending_runs

DEMO_USER = "demo-user"
DEMO_TITLE = "Seeded demo session"
# What a user might have typed; each carries a client message id, as a real client's would.
DEMO_MESSAGES = (
    ("seed-1", "Summarise yesterday's standup notes."),
    ("seed-2", "Draft a reply to the supplier about the late delivery."),
    ("seed-3", "List three risks in the migration plan."),
)


def seed(store: Store) -> list[Run]:
    """Create one session and one pending run per demo message; return the runs."""
    session = store.create_session(DEMO_USER, DEMO_TITLE)
    runs = []
    for client_message_id, text in DEMO_MESSAGES:
        # The same path the gateway takes: a content-derived key, then an insert that
        # the key's unique constraint arbitrates.
        key = idempotency_key_for(session.id, client_message_id, text)
        runs.append(store.create_run(session.id, text, key).run)
    return runs


def main() -> int:
    """Seed the configured store and say where the runs went and how to see them."""
    try:
        store = make_store()
        runs = seed(store)
    except LabError as error:  # no store configured, database down, tables missing
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    print(
        _("seeded session {session} with {count} pending run(s):").format(
            session=runs[0].session_id, count=len(runs)
        )
    )
    for run in runs:
        print(f"  {run.id}  {run.status}  {run.input!r}")
    if os.environ.get("MOCK") == "1":
        # Another process has its own empty MemoryStore, so ask the worker's query here.
        waiting = pending_runs(store)
        print(
            _("MOCK=1: the worker's query in this process sees {count} pending run(s).").format(
                count=len(waiting)
            )
        )
        print(
            _("A worker in another process has its own empty memory and would see none (MOCK.md).")
        )
    else:
        package = __package__ or "starter"
        print(
            _("now run `{command}` in another terminal to list them").format(
                command=f"python -m {package}.worker --once"
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
