"""What every self-check runs in: its context, the registry, and the failure it raises.

A check gets a CheckContext: the tree under test, a traced store and a traced
gateway client, and helpers that point failures at the learner's TODO.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .hints import Hint, hint_for
from .trace import Trace, TracingClient, TracingStore
from .trees import Tree


class CheckFailed(Exception):
    """A check saw something other than what the lab asks for."""

    def __init__(self, expected: str, got: str, hint: Hint | None = None) -> None:
        self.expected = expected
        self.got = got
        self.hint = hint
        super().__init__(f"expected {expected}; got {got}")


@dataclass
class CheckContext:
    """What a check works with: the tree, a traced store and a traced gateway client.

    `raw` is the same store untraced: the check inspects the tables through it,
    so the trace shows only what the lesson's actors did.
    """

    tree: Tree
    store_kind: str  # "memory" or "postgres"
    store: Any
    raw: Any
    client: TracingClient
    trace: Trace

    def error(self, name: str) -> type[Exception]:
        """Return the tree's error class with this name."""
        cls: type[Exception] = getattr(self.tree.module("shared.errors"), name)
        return cls

    def status(self, name: str) -> Any:
        """Return RunStatus.<name> from the tree."""
        return getattr(self.tree.module("shared.states").RunStatus, name)

    def new_session(self) -> str:
        """Open a session through the gateway and return its id."""
        answer = self.client.post("/sessions", {"userId": "learner-1", "title": "self-check"})
        expect(
            answer.status_code == 201,
            "POST /sessions -> 201 {sessionId}",
            f"{answer.status_code} {answer.get_data(as_text=True).strip()}",
        )
        return str(answer.get_json()["sessionId"])

    def new_run(self, message: str) -> Any:
        """Send a message through the gateway and return the run it created."""
        answer = self.client.post("/chat", {"sessionId": self.new_session(), "message": message})
        expect(
            answer.status_code == 202,
            "POST /chat -> 202 {runId, status}",
            f"{answer.status_code} {answer.get_data(as_text=True).strip()}",
        )
        return self.raw.get_run(answer.get_json()["runId"])

    def hint(self, relative: str, check: int) -> Hint:
        """Point at the TODO(check N) in one of the tree's files."""
        return hint_for(self.tree, relative, check)

    def schema_or(self, relative: str, check: int) -> Hint:
        """On Postgres the constraint lives in the schema; in memory, in relative."""
        if self.store_kind == "postgres":
            return self.hint("shared/schema.py", check)
        return self.hint(relative, check)


@dataclass(frozen=True)
class Check:
    """A numbered check: its title, its function, and the file its failures point to."""

    number: int
    title: str
    run: Callable[[CheckContext], None]
    default_hint: str


CHECKS: list[Check] = []


def check(
    number: int, title: str, default_hint: str
) -> Callable[[Callable[[CheckContext], None]], Callable[[CheckContext], None]]:
    """Register a function as self-check number."""

    def register(fn: Callable[[CheckContext], None]) -> Callable[[CheckContext], None]:
        CHECKS.append(Check(number, title, fn, default_hint))
        return fn

    return register


def expect(condition: bool, expected: str, got: str, hint: Hint | None = None) -> None:
    """Raise CheckFailed unless condition holds."""
    if not condition:
        raise CheckFailed(expected, got, hint)


def make_context(tree: Tree, store_kind: str, raw_store: object) -> CheckContext:
    """Wrap a store and a fresh gateway app in tracing for one check."""
    trace = Trace()
    store = TracingStore(raw_store, trace)
    app = tree.module("gateway").create_app(store)
    return CheckContext(tree, store_kind, store, raw_store, TracingClient(app, trace), trace)
