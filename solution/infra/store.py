"""The one interface the gateway, worker and checks call; both stores fit it without inheriting."""

from dataclasses import dataclass
from typing import Protocol

from ..shared.schema import ChatSession, Message, Run
from ..shared.states import RunStatus


@dataclass(frozen=True)
class RunCreated:
    """The run for an idempotency key, and whether this call inserted it."""

    run: Run
    created: bool


class Store(Protocol):
    """Sessions, runs and messages, with the database's guarantees."""

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the store can serve requests now."""

    def create_session(self, user_id: str, title: str) -> ChatSession:
        """Insert a new session and return it."""

    def get_session(self, session_id: str) -> ChatSession:
        """Return the session, or raise SessionNotFoundError."""

    def create_run(self, session_id: str, input: str, idempotency_key: str) -> RunCreated:
        """Insert a pending run unless one already holds the key; return the run either way."""

    def get_run(self, run_id: str) -> Run:
        """Return the run, or raise RunNotFoundError."""

    def count_runs_with_key(self, idempotency_key: str) -> int:
        """Count the rows holding this idempotency key (one, once the key is unique)."""

    def transition(self, run_id: str, expected: RunStatus, target: RunStatus) -> Run:
        """Move the run from expected to target, if allowed and if it is still expected."""

    def append_message(
        self, session_id: str, run_id: str | None, role: str, content: str, seq: int
    ) -> Message:
        """Insert a message at seq, or raise DuplicateMessageError if that seq is taken."""

    def messages_for_run(self, run_id: str) -> list[Message]:
        """Return the run's messages ordered by seq."""

    def pending_runs(self, limit: int = 100) -> list[Run]:
        """Return up to limit pending runs, oldest first, without changing them."""
