"""Every error the lab raises on purpose, each with the facts a learner needs."""


class LabError(Exception):
    """Base class of the errors below."""


class StoreConfigError(LabError):
    """No store could be chosen from the environment."""


class InvalidRequestError(LabError):
    """The request cannot be accepted as sent (code says why); names the field at fault, if any."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        self.code, self.field = code, field
        super().__init__(message)


class MissingConstraintError(LabError):
    """Postgres refused ON CONFLICT (idempotency_key): no unique constraint covers the key."""


class StoreUnavailableError(LabError):
    """The store cannot serve now: reason tells all (for logs), kind its class (for clients)."""

    def __init__(self, reason: str, kind: str = "store unavailable") -> None:
        self.reason, self.kind = reason, kind
        super().__init__(reason)


class SessionNotFoundError(LabError):
    """No session has this id."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"session {session_id!r} does not exist")


class RunNotFoundError(LabError):
    """No run has this id."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id!r} does not exist")


class IllegalTransitionError(LabError):
    """The allowlist has no edge from the run's state to the requested one."""

    def __init__(self, run_id: str, current: str, target: str) -> None:
        self.run_id, self.current, self.target = run_id, current, target
        super().__init__(f"run {run_id}: {current} -> {target} is not an allowed transition")


class TransitionConflictError(LabError):
    """The run left the expected state before this write landed (someone else won)."""

    def __init__(self, run_id: str, expected: str, actual: str) -> None:
        self.run_id, self.expected, self.actual = run_id, expected, actual
        super().__init__(f"run {run_id} is {actual}, not {expected}: another writer moved it first")


class DuplicateMessageError(LabError):
    """The run already has a message at this seq."""

    def __init__(self, run_id: str, seq: int) -> None:
        self.run_id, self.seq = run_id, seq
        super().__init__(f"run {run_id} already has a message at seq {seq}")


class IdempotencyConflictError(LabError):
    """A client message id came back with a different message."""

    def __init__(self, client_message_id: str, run_id: str) -> None:
        self.client_message_id, self.run_id = client_message_id, run_id
        used = f"clientMessageId {client_message_id!r} was already used for run {run_id}"
        super().__init__(f"{used} with a different message")
