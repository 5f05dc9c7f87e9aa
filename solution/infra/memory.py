"""The MOCK=1 store: dicts under one lock (the gateway has threads), with the database's rules."""

import threading

from ..shared import errors
from ..shared.schema import ChatSession, Message, Run, utc_now
from ..shared.states import RunStatus, ensure_transition
from .store import RunCreated


class MemoryStore:
    """Sessions, runs and messages in this process's memory (lost on exit)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, ChatSession] = {}
        self._runs: dict[str, Run] = {}
        self._pending: dict[str, None] = {}  # ids of the pending runs (a set, in order)
        self._messages: dict[str | None, list[Message]] = {}  # by run_id, as written
        # The indexes: like a database's, they check a unique rule by one lookup, never a scan.
        # idempotency_key -> the ids of the runs holding it (one, once the key is unique):
        self._runs_by_key: dict[str, list[str]] = {}
        # (run_id, seq) -> the id of the first message stored at that position:
        self._message_at: dict[tuple[str, int], str] = {}

    def ping(self) -> None:
        """Always ready: there is no database to lose."""

    def create_session(self, user_id: str, title: str) -> ChatSession:
        """Insert a new session and return a copy of it."""
        session = ChatSession(user_id=user_id, title=title)
        with self._lock:
            self._sessions[session.id] = session
            return session.model_copy()

    def get_session(self, session_id: str) -> ChatSession:
        """Return a copy of the session, or raise SessionNotFoundError."""
        with self._lock:
            return self._session(session_id).model_copy()

    def create_run(self, session_id: str, input: str, idempotency_key: str) -> RunCreated:
        """Insert a pending run unless the key is taken; return the run either way."""
        run = Run(session_id=session_id, idempotency_key=idempotency_key, input=input)
        # Looking the key up and inserting under one lock: two requests cannot both find it free.
        with self._lock:
            self._session(session_id)  # foreign key: no run without its session
            # SOLUTION(check 3): keep idempotency_key unique: return the run that already holds it.
            # One lookup in the index self._runs_by_key says whether the key is taken.
            if idempotency_key in self._runs_by_key:
                holder = self._runs[self._runs_by_key[idempotency_key][0]]
                return RunCreated(run=holder.model_copy(), created=False)
            # END(check 3)
            self._runs[run.id] = run
            self._runs_by_key.setdefault(idempotency_key, []).append(run.id)
            self._pending[run.id] = None
            return RunCreated(run=run.model_copy(), created=True)

    def get_run(self, run_id: str) -> Run:
        """Return a copy of the run, or raise RunNotFoundError."""
        with self._lock:
            return self._run(run_id).model_copy()

    def count_runs_with_key(self, idempotency_key: str) -> int:
        """Count the runs holding this idempotency key."""
        with self._lock:
            return len(self._runs_by_key.get(idempotency_key, []))

    def transition(self, run_id: str, expected: RunStatus, target: RunStatus) -> Run:
        """Compare-and-set: move the run only if the allowlist and its status agree."""
        ensure_transition(run_id, expected, target)
        with self._lock:
            run = self._run(run_id)
            if run.status != expected:
                raise errors.TransitionConflictError(run_id, expected, run.status)
            run.status = target
            run.updated_at = utc_now()
            self._pending.pop(run_id, None)
            if target == RunStatus.PENDING:
                self._pending[run_id] = None
            return run.model_copy()

    def append_message(
        self, session_id: str, run_id: str | None, role: str, content: str, seq: int
    ) -> Message:
        """Insert a message at seq, or raise DuplicateMessageError."""
        message = Message(session_id=session_id, run_id=run_id, role=role, content=content, seq=seq)
        with self._lock:
            self._session(session_id)
            if run_id is not None:
                self._run(run_id)
            # SOLUTION(check 5): keep (run_id, seq) unique: refuse a second message at that seq.
            # One lookup in the index self._message_at says whether (run_id, seq) is taken;
            # if it is, raise errors.DuplicateMessageError(run_id, seq).
            if run_id is not None and (run_id, seq) in self._message_at:
                raise errors.DuplicateMessageError(run_id, seq)
            # END(check 5)
            self._messages.setdefault(run_id, []).append(message)
            if run_id is not None:
                self._message_at.setdefault((run_id, seq), message.id)
            return message.model_copy()

    def messages_for_run(self, run_id: str) -> list[Message]:
        """Return copies of the run's messages ordered by seq."""
        with self._lock:
            found = [m.model_copy() for m in self._messages.get(run_id, [])]
        return sorted(found, key=lambda m: m.seq)

    def pending_runs(self, limit: int = 100) -> list[Run]:
        """Return up to limit pending runs, oldest first."""
        with self._lock:
            pending = [self._runs[run_id] for run_id in self._pending]
            oldest_first = sorted(pending, key=lambda run: (run.created_at, run.id))
            return [run.model_copy() for run in oldest_first[: max(limit, 0)]]

    def _session(self, session_id: str) -> ChatSession:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise errors.SessionNotFoundError(session_id) from None

    def _run(self, run_id: str) -> Run:
        try:
            return self._runs[run_id]
        except KeyError:
            raise errors.RunNotFoundError(run_id) from None
