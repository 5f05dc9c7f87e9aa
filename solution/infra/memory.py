"""The MOCK=1 store: dicts under a lock, with the database's rules enforced.

Not a stub: the unique key, the unique (run_id, seq), the foreign keys and
compare-and-set status changes are all checked here, because the gateway
serves requests on several threads at once.
"""

from __future__ import annotations

import threading

from ..shared.errors import (
    DuplicateMessageError,
    RunNotFoundError,
    SessionNotFoundError,
    TransitionConflictError,
)
from ..shared.ids import new_id
from ..shared.schema import ChatSession, Message, Run, utc_now
from ..shared.states import RunStatus, ensure_transition
from .store import RunCreated


class MemoryStore:
    """Sessions, runs and messages in this process's memory (lost on exit)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, ChatSession] = {}
        self._runs: dict[str, Run] = {}
        self._messages: list[Message] = []

    def ping(self) -> None:
        """Always ready: there is no database to lose."""

    def create_session(self, user_id: str, title: str) -> ChatSession:
        """Insert a new session and return a copy of it."""
        session = ChatSession(id=new_id(), user_id=user_id, title=title)
        with self._lock:
            self._sessions[session.id] = session
            return session.model_copy()

    def get_session(self, session_id: str) -> ChatSession:
        """Return a copy of the session, or raise SessionNotFoundError."""
        with self._lock:
            return self._session(session_id).model_copy()

    def create_run(self, session_id: str, input: str, idempotency_key: str) -> RunCreated:
        """Insert a pending run unless the key is taken; return the run either way."""
        with self._lock:
            self._session(session_id)  # foreign key: no run without its session
            # SOLUTION(check 3): keep idempotency_key unique: return the run that holds it.
            for existing in self._runs.values():
                if existing.idempotency_key == idempotency_key:
                    return RunCreated(run=existing.model_copy(), created=False)
            # END(check 3)
            run = Run(
                id=new_id(),
                session_id=session_id,
                status=RunStatus.PENDING,
                idempotency_key=idempotency_key,
                input=input,
            )
            self._runs[run.id] = run
            return RunCreated(run=run.model_copy(), created=True)

    def get_run(self, run_id: str) -> Run:
        """Return a copy of the run, or raise RunNotFoundError."""
        with self._lock:
            return self._run(run_id).model_copy()

    def count_runs_with_key(self, idempotency_key: str) -> int:
        """Count the runs holding this idempotency key."""
        with self._lock:
            return sum(1 for run in self._runs.values() if run.idempotency_key == idempotency_key)

    def transition(self, run_id: str, expected: RunStatus, target: RunStatus) -> Run:
        """Compare-and-set: move the run only if the allowlist and its status agree."""
        ensure_transition(run_id, expected, target)
        with self._lock:
            run = self._run(run_id)
            if run.status != expected:
                raise TransitionConflictError(run_id, expected, run.status)
            run.status = target
            run.updated_at = utc_now()
            return run.model_copy()

    def append_message(
        self, session_id: str, run_id: str | None, role: str, content: str, seq: int
    ) -> Message:
        """Insert a message at seq, or raise DuplicateMessageError."""
        with self._lock:
            self._session(session_id)
            if run_id is not None:
                self._run(run_id)
            # SOLUTION(check 5): keep (run_id, seq) unique: refuse a second message there.
            if run_id is not None and any(
                m.run_id == run_id and m.seq == seq for m in self._messages
            ):
                raise DuplicateMessageError(run_id, seq)
            # END(check 5)
            message = Message(
                id=new_id(),
                session_id=session_id,
                run_id=run_id,
                role=role,
                content=content,
                seq=seq,
            )
            self._messages.append(message)
            return message.model_copy()

    def messages_for_run(self, run_id: str) -> list[Message]:
        """Return copies of the run's messages ordered by seq."""
        with self._lock:
            found = [m.model_copy() for m in self._messages if m.run_id == run_id]
        return sorted(found, key=lambda m: m.seq)

    def pending_runs(self, limit: int = 100) -> list[Run]:
        """Return up to limit pending runs, oldest first."""
        with self._lock:
            pending = [r.model_copy() for r in self._runs.values() if r.status == RunStatus.PENDING]
        return sorted(pending, key=lambda r: (r.created_at, r.id))[:limit]

    def _session(self, session_id: str) -> ChatSession:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise SessionNotFoundError(session_id) from None

    def _run(self, run_id: str) -> Run:
        try:
            return self._runs[run_id]
        except KeyError:
            raise RunNotFoundError(run_id) from None
