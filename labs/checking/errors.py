"""The checking package's errors: a host that cannot answer, a check that failed, a refusal.

Each carries the facts: what the check expected and got, or the class name,
message and file:line of what the tree raised (cleaned: it is the learner's
text), or why the host could not answer.
"""

from __future__ import annotations

from labs.untrusted import clean_text

from .hints import Hint
from .rules import Rule


class HostError(Exception):
    """The host could not answer."""


class HostTimeoutError(HostError):
    """No answer within the time allowed."""


class HostGoneError(HostError):
    """The host closed its answers pipe: it exited or was killed."""


class HostProtocolError(HostError):
    """The host wrote something that is not an answer."""


class TreeDoesNotImportError(Exception):
    """The host could not import the tree: the reason, as the host told it."""


class CheckFailedError(Exception):
    """A check saw something other than what the lab asks for, and which rules that broke."""

    def __init__(
        self, expected: str, got: str, hint: Hint | None = None, rules: tuple[Rule, ...] = ()
    ) -> None:
        self.expected = expected
        self.got = got
        self.hint = hint
        self.rules = rules  # the one expected names first; more when the check saw them at once
        super().__init__(f"expected {expected}; got {got}")


class RefusedError(Exception):
    """The tree raised an error while answering: its class name, message and where."""

    def __init__(self, error: object) -> None:
        fields = error if isinstance(error, dict) else {}
        self.type = clean_text(fields.get("type", "Error"), 80)
        self.message = clean_text(fields.get("message", ""), 300)
        self.where = clean_text(fields.get("where", ""), 200)
        super().__init__(f"{self.type}: {self.message}")

    def describe(self) -> str:
        """Type, message, and the tree's file:line when the host could tell."""
        return f"{self.type}: {self.message}" + (f" (at {self.where})" if self.where else "")
