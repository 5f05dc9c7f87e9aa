"""Recording who called whom, with what, and what came back.

A check's trace is a list of arrows between four lanes: client, gateway,
store and worker. The CLI prints it with --trace; the dashboard draws it
as a sequence diagram. Replays and refusals are marked, so the duplicate
request and the refused write stand out.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from typing import Any

from labs.term.i18n import _
from labs.untrusted import clean_text, clip

from .marks import EXISTING, INSERTED, NOTES, Marks

LANES = ("client", "gateway", "store", "worker")


class Arrow(StrEnum):
    """What an arrow means: its kind, as the CLI marks it and the dashboard draws it."""

    CALL = "call"
    OK = "ok"  # an ordinary answer
    REPLAY = "replay"  # the answer to a request already made, replayed
    REFUSED = "refused"
    ERROR = "error"
    THROUGH = "through"  # an answer that let through what the lesson forbids (marks.py)


ARROWS = frozenset(Arrow)


@dataclass(frozen=True)
class Event:
    """One arrow of a sequence diagram.

    label is data (what was called, with what; what came back); note, when there is one,
    is one of marks.NOTES, an English msgid each front end words in its own language.
    """

    source: str
    target: str
    label: str
    kind: Arrow
    note: str = ""

    def as_dict(self) -> dict[str, str]:
        """Return the event as plain JSON-ready data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Event:
        """The event as_dict gave this data for (a report line read back)."""
        source, target, label, kind, note = (
            str(data.get(name, "")) for name in ("source", "target", "label", "kind", "note")
        )
        return cls(source, target, label, Arrow(kind), note)

    @property
    def text(self) -> str:
        """The label and its note, the note in the language in use."""
        return f"{self.label} ({_(self.note)})" if self.note else self.label


@dataclass
class Trace:
    """The events of one check, in the order they happened."""

    events: list[Event] = field(default_factory=list)
    marks: Marks = field(default_factory=Marks, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _actor: ContextVar[str] = field(
        default_factory=lambda: ContextVar("actor", default="client"), repr=False
    )

    _muted: ContextVar[bool] = field(
        default_factory=lambda: ContextVar("muted", default=False), repr=False
    )

    def record(self, source: str, target: str, label: str, kind: Arrow, note: str = "") -> None:
        """Append one arrow, unless this thread's calls are muted."""
        if self._muted.get():
            return
        with self._lock:
            self.events.append(Event(source, target, label, kind, note))

    @property
    def recording(self) -> bool:
        """False while this thread's calls are muted."""
        return not self._muted.get()

    @property
    def actor(self) -> str:
        """The lane making calls right now (in this thread)."""
        return self._actor.get()

    @contextlib.contextmanager
    def muted(self, quiet: bool = True) -> Iterator[None]:
        """Record nothing for the calls inside the block (a burst of identical requests)."""
        token = self._muted.set(quiet)
        try:
            yield
        finally:
            self._muted.reset(token)

    @contextlib.contextmanager
    def acting_as(self, lane: str) -> Iterator[None]:
        """Attribute the calls made inside the block to lane."""
        token = self._actor.set(lane)
        try:
            yield
        finally:
            self._actor.reset(token)


def short(value: object, limit: int = 60) -> str:
    """Summarize a value for an arrow's label."""
    if isinstance(value, Enum):
        text = str(value.value)
    elif isinstance(value, str):
        text = repr(value) if len(value) <= limit else repr(value[: limit - 1] + "…")
    elif hasattr(value, "model_dump"):
        text = _describe_record(value)
    elif isinstance(value, list):
        text = "[" + ", ".join(short(v, 30) for v in value[:4])
        text += ", …]" if len(value) > 4 else "]"
    else:
        text = repr(value)
    return text


def _describe_record(record: Any) -> str:
    name = type(record).__name__
    fields = record.model_dump()
    wanted = ("id", "status", "seq", "role")
    shown = ", ".join(f"{k}={fields[k]}" for k in wanted if k in fields)
    return f"{name}({shown})"


class TracingStore:
    """Wraps a store; every call becomes a pair of arrows to and from the store lane."""

    def __init__(self, store: Any, trace: Trace) -> None:
        self._store = store
        self._trace = trace

    def retarget(self, store: Any, trace: Trace) -> None:
        """Wrap another store, recording into another trace (a new check)."""
        self._store = store
        self._trace = trace

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if not callable(method) or name.startswith("_"):
            return method
        return self._wrap(name, method)

    def _wrap(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        trace = self._trace

        def traced(*args: Any, **kwargs: Any) -> Any:
            """The call, with an arrow to the store and one back."""
            caller = trace.actor
            shown = [short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()]
            trace.record(caller, "store", f"{name}({', '.join(shown)})", Arrow.CALL)
            try:
                result = method(*args, **kwargs)
            except Exception as error:
                trace.record("store", caller, f"{type(error).__name__}: {error}", Arrow.REFUSED)
                raise
            kind = Arrow.REPLAY if getattr(result, "created", True) is False else Arrow.OK
            label, note = _describe_result(result)
            if kind == Arrow.OK and trace.recording:
                broken = trace.marks.store(name, args, result)
                kind, note = (Arrow.THROUGH, broken) if broken else (kind, note)
            trace.record("store", caller, label, kind, note)
            return result

        return traced


def _describe_result(result: object) -> tuple[str, str]:
    """The store's answer as the trace shows it, and its note: for a run, whether a row was
    inserted."""
    if result is None:
        return "ok", ""
    run = getattr(result, "run", None)
    if run is not None:
        return f"run {run.id}", INSERTED if getattr(result, "created", None) else EXISTING
    return short(result), ""


def traced_key(
    trace: Trace,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    now: Any,
    clock: float | None = None,
) -> str:
    """idempotency_key_for(*args[, now=now]) in the gateway's lane: a call and its answer,
    the answer marked when the same arguments gave another key before. Without a
    clientMessageId the moment the host's clock was stopped at (clock.py) counts among
    the arguments: another window may rightly give another key."""
    shown = [short(a) for a in args] + ([f"now={now!r}"] if now is not None else [])
    trace.record("gateway", "gateway", f"idempotency_key_for({', '.join(shown)})", Arrow.CALL)
    try:
        key = str(function(*args) if now is None else function(*args, now=now))
    except Exception as error:
        trace.record("gateway", "gateway", f"{type(error).__name__}: {error}", Arrow.REFUSED)
        raise
    moment = clock if len(args) > 1 and args[1] is None else None
    broken = trace.marks.key((*args, now, moment), key) if trace.recording else ""
    trace.record(
        "gateway", "gateway", repr(clip(key, 13)), Arrow.THROUGH if broken else Arrow.OK, broken
    )
    return key


class TracingClient:
    """A Flask test client whose requests are arrows from client to gateway."""

    def __init__(self, app: Any, trace: Trace) -> None:
        self._app = app
        self._trace = trace

    def retarget(self, trace: Trace) -> None:
        """Record into another trace (a new check)."""
        self._trace = trace

    def request(self, method: str, path: str, body: object = None, **kwargs: Any) -> Any:
        """Send one request and record it and its answer."""
        trace = self._trace
        label = f"{method} {path}" + (f" {json.dumps(body)}" if body is not None else "")
        trace.record("client", "gateway", clip(label, 160), Arrow.CALL)
        with trace.acting_as("gateway"):
            client = self._app.test_client()  # one per call: safe across threads
            response = client.open(path, method=method, json=body, **kwargs)
        kind, note = Arrow.OK, ""
        replayed = response.headers.get("Idempotent-Replayed") == "true"
        if replayed:
            kind = Arrow.REPLAY
        elif response.status_code >= 500:
            kind = Arrow.ERROR
        elif response.status_code >= 400:
            kind = Arrow.REFUSED
        elif method == "POST" and path == "/chat" and trace.recording:
            answered = response.get_json(silent=True)
            note = trace.marks.chat(body, response.status_code, answered, replayed)
            kind = Arrow.THROUGH if note else kind
        answer = response.get_data(as_text=True).strip()
        trace.record("gateway", "client", clip(f"{response.status_code} {answer}", 160), kind, note)
        return response

    def post(self, path: str, body: object = None, **kwargs: Any) -> Any:
        """POST path with a JSON body."""
        return self.request("POST", path, body, **kwargs)

    def get(self, path: str) -> Any:
        """GET path."""
        return self.request("GET", path)


def unanswered(events: list[Event]) -> Event | None:
    """The innermost call still waiting for its answer at the end of events, or None.

    Each call waits for the next arrow back from its target to its source: the calls
    still waiting at the end nest, and the last of them is where a hang happened.
    """
    waiting: list[Event] = []
    for event in events:
        if event.kind == Arrow.CALL:
            waiting.append(event)
        elif waiting and (event.source, event.target) == (waiting[-1].target, waiting[-1].source):
            waiting.pop()
    return waiting[-1] if waiting else None


def events_from(untrusted: object, limit: int = 400) -> list[Event]:
    """Trace events as a host reported them, kept only if well formed, labels cleaned."""
    events: list[Event] = []
    if not isinstance(untrusted, list):
        return events
    for item in untrusted[:limit]:
        if not (isinstance(item, list) and len(item) in (4, 5)):
            continue
        source, target, label, kind, *rest = (str(part) for part in item)
        note = rest[0] if rest and rest[0] in NOTES else ""
        if source in LANES and target in LANES and kind in ARROWS:
            events.append(Event(source, target, clean_text(label, 160), Arrow(kind), note))
    return events
