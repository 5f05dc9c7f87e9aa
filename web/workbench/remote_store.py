"""A tree's store as the dashboard sees it: its methods sent to the tree's host, records back.

RemoteStore has the Store's methods a bench uses; each one is a request to
the tree's host (tree_link.py), and each answer comes back as a plain
record (StoredRun, StoredMessage). What the tree raised comes back as a
TreeRaisedError named like the tree's own: a StoreDownError for its
StoreUnavailableError, RunGoneError and SessionGoneError for the records it
no longer holds. Every text in them was cleaned on the way (it is the
learner's).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from labs.checking.api import MAX_BATCH, RefusedError

from .tree_link import TreeLink


class TreeRaisedError(Exception):
    """The tree raised while answering: its error's class name, message and where."""

    type_name = "Error"

    def __init__(self, message: str, type_name: str = "", where: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.type = type_name or self.type_name
        self.where = where


class StoreDownError(TreeRaisedError):
    """The tree's StoreUnavailableError: its database did not answer."""

    type_name = "StoreUnavailableError"


class RunGoneError(TreeRaisedError):
    """The tree's RunNotFoundError: the run is not (or no longer) in its store."""

    type_name = "RunNotFoundError"


class SessionGoneError(TreeRaisedError):
    """The tree's SessionNotFoundError."""

    type_name = "SessionNotFoundError"


# Runs read in one batch request: two calls each, within the host's limit a batch.
BATCH_RUNS = MAX_BATCH // 2
MIRRORED: dict[str, type[TreeRaisedError]] = {
    kind.type_name: kind for kind in (StoreDownError, RunGoneError, SessionGoneError)
}


def mirrored(refused: RefusedError) -> TreeRaisedError:
    """The dashboard's side of an error the tree raised, by the name the tree gave it."""
    kind = MIRRORED.get(refused.type, TreeRaisedError)
    return kind(refused.message, refused.type, refused.where)


def error_text(error: Exception) -> str:
    """An error as the journal quotes it: its class name (the tree's, if the tree raised it)."""
    name = error.type if isinstance(error, TreeRaisedError) else type(error).__name__
    return f"{name}: {error}"


@dataclass(frozen=True)
class StoredRun:
    """A run as the tree's store answered it."""

    id: str
    session_id: str
    status: str
    input: str
    updated_at: datetime | None


@dataclass(frozen=True)
class StoredMessage:
    """A message as the tree's store answered it."""

    seq: int
    role: str
    content: str


def _fields(value: object) -> dict[str, Any]:
    """A JSON object from the host, or an empty one if it sent something else."""
    return value if isinstance(value, dict) else {}


def _when(value: object) -> datetime | None:
    """A time the host sent in ISO format, or None."""
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def run_from(value: object) -> StoredRun:
    """A run record from its JSON dump; a field the tree left out reads as empty."""
    fields = _fields(value)
    return StoredRun(
        id=str(fields.get("id", "")),
        session_id=str(fields.get("session_id", "")),
        status=str(fields.get("status", "")),
        input=str(fields.get("input", "")),
        updated_at=_when(fields.get("updated_at")),
    )


def message_from(value: object) -> StoredMessage:
    """A message record from its JSON dump."""
    fields = _fields(value)
    seq = fields.get("seq")
    return StoredMessage(
        seq=seq if isinstance(seq, int) else -1,
        role=str(fields.get("role", "")),
        content=str(fields.get("content", "")),
    )


class RemoteStore:
    """The Store methods a bench uses, each one a request to the tree's host."""

    def __init__(self, link: TreeLink) -> None:
        self.link = link

    def _call(self, op: str, **args: Any) -> Any:
        try:
            return self.link.call(op, **args)
        except RefusedError as refused:
            raise mirrored(refused) from None

    def _store(self, method: str, *args: Any) -> Any:
        return self._call("store", method=method, args=list(args), traced=False)

    def get_session(self, session_id: str) -> None:
        """Raise SessionGoneError unless the store holds the session."""
        self._store("get_session", session_id)

    def get_run(self, run_id: str) -> StoredRun:
        """The run, or RunGoneError."""
        return run_from(self._store("get_run", run_id))

    def messages_for_run(self, run_id: str) -> list[StoredMessage]:
        """The run's messages, in the order the store gave them."""
        found = self._store("messages_for_run", run_id)
        return [message_from(m) for m in found] if isinstance(found, list) else []

    def transition(self, run_id: str, expected: str, target: str) -> StoredRun:
        """Ask the store to move the run from expected to target."""
        return run_from(self._store("transition", run_id, expected, target))

    def append_message(
        self, session_id: str, run_id: str, role: str, content: str, seq: int
    ) -> None:
        """Ask the store to write a message at seq."""
        self._store("append_message", session_id, run_id, role, content, seq)

    def pending_runs(self, limit: int) -> list[StoredRun]:
        """The tree's worker query (which reads its store): the runs waiting, oldest first."""
        found = self._call("pending_runs", limit=limit)
        return [run_from(r) for r in found] if isinstance(found, list) else []

    def read_runs(self, run_ids: list[str]) -> list[tuple[StoredRun, int] | None]:
        """Each run and how many messages it has, a batch per BATCH_RUNS; None for a run gone."""
        found: list[tuple[StoredRun, int] | None] = []
        for start in range(0, len(run_ids), BATCH_RUNS):
            found += self._read_batch(run_ids[start : start + BATCH_RUNS])
        return found

    def _read_batch(self, run_ids: list[str]) -> list[tuple[StoredRun, int] | None]:
        calls = [
            {"op": "store", "method": method, "args": [run_id], "traced": False}
            for run_id in run_ids
            for method in ("get_run", "messages_for_run")
        ]
        answers = self._call("batch", calls=calls)
        if not isinstance(answers, list) or len(answers) != len(calls):
            raise TreeRaisedError("the host's batch answer does not match its requests")
        replies = [_reply(answer) for answer in answers]
        found: list[tuple[StoredRun, int] | None] = []
        for run, messages in zip(replies[0::2], replies[1::2], strict=True):
            for reply in (run, messages):
                if isinstance(reply, TreeRaisedError) and not isinstance(reply, RunGoneError):
                    raise reply  # the store is down, or the tree has a bug: not a gone run
            if isinstance(run, TreeRaisedError):
                found.append(None)
            else:
                count = len(messages) if isinstance(messages, list) else 0
                found.append((run_from(run), count))
        return found


def _reply(answer: object) -> object:
    """One answer of a batch: its value, or the mirrored error the tree raised."""
    fields = _fields(answer)
    if fields.get("ok") is True:
        return fields.get("value")
    return mirrored(RefusedError(fields.get("error")))
