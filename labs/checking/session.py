"""The driver's end of one host: requests out with fresh ids, answers in, events collected.

Every request carries a fresh random id, and an answer must carry the same
id: lines a tree writes on its own can only break its run, never pass a
check. An answer's value is returned; an error answer is a RefusedError
naming what the tree raised.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labs.term.i18n import _
from labs.trees.finding import Tree
from labs.untrusted import clean_text

from .errors import (
    HostError,
    HostProtocolError,
    HostTimeoutError,
    RefusedError,
    TreeDoesNotImportError,
)
from .protocol import HELLO, HostProcess, HostSpec, Launcher
from .trace import Event, events_from

START_TIMEOUT = 60.0  # seconds a host may take to import the tree
# How long before a request's deadline the host prints its stacks (hints.stuck_at reads them).
STACK_MARGIN = 0.5


@dataclass
class HostSession:
    """The driver's end of one host: requests out, answers in, events collected."""

    process: HostProcess
    deadline: float = 0.0
    events: list[Event] = field(default_factory=list)
    hello: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(
        cls, launcher: Launcher, spec: HostSpec, timeout: float = START_TIMEOUT
    ) -> HostSession:
        """Launch a host and wait for its hello; TreeDoesNotImportError if the tree would not."""
        return cls(launcher.launch(spec)).greeted(spec, timeout)

    def greeted(self, spec: HostSpec, timeout: float = START_TIMEOUT) -> HostSession:
        """This session once its host said hello (read here, within timeout), for a host
        launched without waiting; TreeDoesNotImportError if the tree would not import."""
        try:
            answer = self.process.receive(timeout)
        except HostError as error:
            tail = clean_text(self.process.stderr_tail().strip(), 600)
            self.kill()
            why = (
                _(
                    "it did not finish importing within {seconds:g} s (a loop at module level?)"
                ).format(seconds=timeout)
                if isinstance(error, HostTimeoutError)
                else _("its process exited while importing it")
            )
            if tail:
                why += _("; its last output: {tail}").format(tail=tail)
            raise TreeDoesNotImportError(why) from None
        if answer.get("id") != HELLO or answer.get("ok") is not True:
            self.kill()
            refused = RefusedError(answer.get("error"))
            said = refused.message or "no hello from the host"
            if refused.where:  # the file:line the import failed at, with the tree's own path
                tree = Tree(spec.tree.name, spec.package, Path(spec.tree))
                path, _colon, line = refused.where.rpartition(":")
                said += _(" (at {where})").format(where=f"{tree.display_path(path)}:{line}")
            raise TreeDoesNotImportError(said)
        value = answer.get("value")
        self.hello = value if isinstance(value, dict) else {}
        return self

    @property
    def statuses(self) -> tuple[str, ...]:
        """The statuses the tree declares, as it said in its hello."""
        found = self.hello.get("statuses")
        return tuple(clean_text(s, 40) for s in found) if isinstance(found, list) else ()

    @property
    def root(self) -> str:
        """The tree's folder as the host sees it (a sandbox copies it elsewhere), or ""."""
        return clean_text(self.hello.get("root", ""), 1000)

    def call(self, op: str, **args: Any) -> Any:
        """Send one request and return its value; RefusedError if the tree raised an error.

        The host is asked to print every thread's stack shortly before the deadline, so a
        request that never ends leaves, in the host's output, where it was stuck.
        """
        token = secrets.token_hex(8)
        left = max(self.deadline - time.monotonic(), 0.0)
        stack_after = round(max(left - min(STACK_MARGIN, left / 4), 0.01), 3)
        self.process.send({"id": token, "op": op, "stack_after": stack_after, **args})
        answer = self.process.receive(left)
        while answer.get("partial") is True:  # the arrows so far of a request running late
            self.events.extend(events_from(answer.get("events")))
            answer = self.process.receive(max(self.deadline - time.monotonic(), 0.0))
        if answer.get("id") != token:
            raise HostProtocolError("an answer to a request the driver never sent")
        self.events.extend(events_from(answer.get("events")))
        if answer.get("ok") is True:
            return answer.get("value")
        raise RefusedError(answer.get("error"))

    def take_events(self) -> list[Event]:
        """The arrows collected since the last call to this."""
        events, self.events = self.events, []
        return events

    def kill(self) -> None:
        """Kill the host and all it started."""
        self.process.kill()
