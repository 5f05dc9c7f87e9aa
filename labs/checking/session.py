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
from typing import Any

from labs.term.i18n import _
from labs.untrusted import clean_text

from .errors import (
    HostError,
    HostProtocolError,
    HostTimeoutError,
    RefusedError,
    TreeDoesNotImportError,
)
from .protocol import HostProcess, HostSpec, Launcher
from .trace import Event, events_from

START_TIMEOUT = 60.0  # seconds a host may take to import the tree


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
        session = cls(launcher.launch(spec))
        try:
            answer = session.process.receive(timeout)
        except HostError as error:
            tail = clean_text(session.process.stderr_tail().strip(), 600)
            session.kill()
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
        if answer.get("id") != "hello" or answer.get("ok") is not True:
            session.kill()
            raise TreeDoesNotImportError(
                RefusedError(answer.get("error")).message or "no hello from the host"
            )
        value = answer.get("value")
        session.hello = value if isinstance(value, dict) else {}
        return session

    @property
    def statuses(self) -> tuple[str, ...]:
        """The statuses the tree declares, as it said in its hello."""
        found = self.hello.get("statuses")
        return tuple(clean_text(s, 40) for s in found) if isinstance(found, list) else ()

    def call(self, op: str, **args: Any) -> Any:
        """Send one request and return its value; RefusedError if the tree raised an error."""
        token = secrets.token_hex(8)
        self.process.send({"id": token, "op": op, **args})
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
