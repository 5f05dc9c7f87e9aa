"""Classic learner mistakes, each a small edit of the solution, and the checks each must fail.

A Mistake is applied to a copy of the solution tree; the checks must fail
exactly `fails` (on memory, and on Postgres where the edit reaches the schema
too). `fair` entries are correct answers written differently: all six pass.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from labs.trees import REPO_ROOT

Edit = tuple[str, str, str]  # file inside the tree, text to find, text to put instead


@dataclass(frozen=True)
class Mistake:
    """A named edit of the solution and the checks it must fail (empty: a fair answer)."""

    name: str
    edits: tuple[Edit, ...]
    fails: frozenset[int]
    fails_on_postgres: frozenset[int] | None = None  # None: the same as on memory

    @property
    def postgres_fails(self) -> frozenset[int]:
        """The checks this mistake fails on Postgres."""
        return self.fails if self.fails_on_postgres is None else self.fails_on_postgres

    def apply(self, parent: Path) -> Path:
        """Write a copy of the solution with the edits into parent/name and return it."""
        tree = parent / self.name
        shutil.copytree(REPO_ROOT / "solution", tree, ignore=shutil.ignore_patterns("__pycache__"))
        for relative, old, new in self.edits:
            path = tree / relative
            text = path.read_text(encoding="utf-8")
            assert text.count(old) == 1, f"{self.name}: {old!r} is not once in {relative}"
            path.write_text(text.replace(old, new), encoding="utf-8")
        return tree


CLIENT_KEY = 'material = f"client\\x1f{session_id}\\x1f{client_message_id}"'
MEMORY_UNIQUE_SEQ = "if run_id is not None and (run_id, seq) in self._message_at:"

MISTAKES = (
    Mistake(
        "key-with-time-even-with-client-id",
        (
            (
                "shared/keys.py",
                CLIENT_KEY,
                'material = f"client\\x1f{session_id}\\x1f{client_message_id}\\x1f'
                '{int((time.time() if now is None else now) // TIME_BUCKET_SECONDS)}"',
            ),
        ),
        frozenset({3}),
    ),
    Mistake(
        "key-not-scoped-to-the-session",
        (("shared/keys.py", CLIENT_KEY, 'material = f"client\\x1f{client_message_id}"'),),
        frozenset({3}),
    ),
    Mistake(
        "random-key",
        (
            (
                "shared/keys.py",
                CLIENT_KEY,
                'material = f"client\\x1f{session_id}\\x1f{time.perf_counter_ns()}"',
            ),
        ),
        frozenset({3}),
    ),
    Mistake(
        "key-ignores-the-client-id",
        (("shared/keys.py", CLIENT_KEY, 'material = f"client\\x1f{session_id}\\x1f{message}"'),),
        frozenset({3}),
    ),
    Mistake(
        "allowlist-without-pending-to-failed",
        (
            (
                "shared/states.py",
                "frozenset({RunStatus.RUNNING, RunStatus.CANCELLED, RunStatus.FAILED})",
                "frozenset({RunStatus.RUNNING, RunStatus.CANCELLED})",
            ),
        ),
        frozenset({4}),
    ),
    Mistake(
        "allowlist-with-a-terminal-move",
        (
            (
                "shared/states.py",
                "RunStatus.DONE: frozenset(),",
                "RunStatus.DONE: frozenset({RunStatus.RUNNING}),",
            ),
        ),
        frozenset({4}),
    ),
    Mistake(
        "a-refused-move-still-writes",
        (
            (
                "infra/memory.py",
                """        ensure_transition(run_id, expected, target)
        with self._lock:""",
                """        with self._lock:""",
            ),
            (
                "infra/memory.py",
                """            run.status = target
            run.updated_at = utc_now()""",
                """            run.status = target
            ensure_transition(run_id, expected, target)  # too late: the row has changed
            run.updated_at = utc_now()""",
            ),
        ),
        frozenset({4}),
        frozenset(),  # an edit of the memory store only
    ),
    Mistake(
        "unique-seq-instead-of-run-and-seq",
        (
            (
                "infra/memory.py",
                MEMORY_UNIQUE_SEQ,
                "if any(taken == seq for _, taken in self._message_at):",
            ),
            (
                "shared/schema.py",
                'UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key")',
                'UniqueConstraint("seq", name="messages_run_id_seq_key")',
            ),
        ),
        frozenset({5}),
    ),
    Mistake(
        "check-then-insert-outside-the-lock",
        (
            (
                "infra/memory.py",
                """        with self._lock:
            self._session(session_id)  # foreign key: no run without its session
            # SOLUTION(check 3)""",
                """        with self._lock:
            self._session(session_id)
            taken = self._runs_by_key.get(idempotency_key)
        if taken:
            return RunCreated(run=self._runs[taken[0]].model_copy(), created=False)
        run = run.model_copy()  # the work a real insert does, with the lock released
        with self._lock:
            # SOLUTION(check 3)""",
            ),
            (
                "infra/memory.py",
                "            if idempotency_key in self._runs_by_key:\n",
                "            if False:\n",
            ),
        ),
        frozenset({3}),
        frozenset(),  # an edit of the memory store only: Postgres keeps the key unique
    ),
    Mistake(
        "check-then-insert-in-the-gateway",
        (
            (
                "gateway/routes.py",
                "        outcome = store.create_run(body.session_id, body.message, key)\n",
                """        found = [r for r in store.pending_runs(9999) if r.idempotency_key == key]
        if found:
            outcome = RunCreated(run=found[0], created=False)
        else:
            outcome = store.create_run(body.session_id, body.message, key)
""",
            ),
            (
                "gateway/routes.py",
                "from ..infra.store import Store\n",
                "from ..infra.store import RunCreated, Store\n",
            ),
            (
                "infra/memory.py",
                "            if idempotency_key in self._runs_by_key:\n",
                "            if False:\n",
            ),
        ),
        frozenset({3}),
        frozenset(),  # on Postgres the unique constraint decides, whatever the gateway asked
    ),
    Mistake(
        "special-cased-literals",
        (
            (
                "shared/keys.py",
                CLIENT_KEY,
                'material = f"client\\x1f{session_id}\\x1f{client_message_id}"\n'
                '        if client_message_id != "c-42":\n'
                '            material += f"\\x1f{time.time_ns()}"',
            ),
        ),
        frozenset({3}),
    ),
    Mistake(
        "fair-key-from-a-uuid5",
        (
            (
                "shared/keys.py",
                CLIENT_KEY,
                "material = str(__import__('uuid').uuid5(__import__('uuid').NAMESPACE_URL, "
                'f"{session_id}/{client_message_id}"))',
            ),
        ),
        frozenset(),
    ),
)
