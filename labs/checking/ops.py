"""The host's answers: one imported tree, its store, and an operation per request.

Each `op_<name>` method answers the request {"op": "<name>", ...}; host.py
reads the requests and writes the answers, and describes the protocol. An
exception raised while answering becomes an error answer naming its type,
its message and the deepest file:line inside the tree.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from enum import Enum
from typing import Any

from labs.trees.finding import Tree

from .clock import HostClock
from .protocol import MAX_BATCH, MAX_BURST, HostSpec, StoreKind
from .tidy import RunRecorder
from .trace import Trace, TracingClient, TracingStore, traced_key
from .turns import Turns

STORE_METHODS = frozenset(
    {
        "ping",
        "create_session",
        "get_session",
        "create_run",
        "get_run",
        "count_runs_with_key",
        "transition",
        "append_message",
        "messages_for_run",
        "pending_runs",
    }
)
TEXT_CAP = 2000


def plain(value: Any) -> Any:
    """A value as JSON data: records by their dump, enums by their value."""
    if value is None or isinstance(value, bool | int | float | str):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, Enum):
        return plain(value.value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "run") and hasattr(value, "created"):
        return {"run": plain(value.run), "created": bool(value.created)}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return str(value)


def bucket_seconds(tree: Tree) -> float | None:
    """The tree's TIME_BUCKET_SECONDS, when shared/keys.py declares it as a number."""
    value = getattr(tree.module("shared.keys"), "TIME_BUCKET_SECONDS", None)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


class Host:
    """One imported tree, its current store, and the answers to the driver's operations."""

    def __init__(self, tree: Tree, spec: HostSpec) -> None:
        self.tree = tree
        self.spec = spec
        self.trace = Trace()
        self.shared: Any = None
        self.raw: Any = None
        self.store: Any = None
        self.client: TracingClient | None = None
        self.clock = HostClock()
        self.status = tree.module("shared.states").RunStatus

    def hello(self) -> dict[str, Any]:
        """What the driver learns once the tree imported (the window: see bucket_seconds)."""
        return {
            "package": self.tree.package,
            "statuses": [s.value for s in self.status],
            "time_bucket_seconds": bucket_seconds(self.tree),
            "root": str(self.tree.root),
        }

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request; an exception becomes an error answer naming its type."""
        op = request.get("op")
        handler = getattr(self, f"op_{op}", None) if isinstance(op, str) else None
        try:
            if handler is None:
                raise ValueError(f"unknown operation {op!r}")
            with self.trace.muted(request.get("quiet") is True):
                return {"ok": True, "value": plain(handler(request))}
        except Exception as error:  # the learner's code may fail in any way
            return {"ok": False, "error": self.describe(error)}

    def describe(self, error: BaseException) -> dict[str, str]:
        """An error as {type, message, where}: where is the deepest frame inside the tree."""
        where = ""
        root = str(self.tree.root)
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if frame.filename.startswith(root):
                where = f"{os.path.relpath(frame.filename, root)}:{frame.lineno}"
                break
        message = str(error)
        return {"type": type(error).__name__, "message": message[:TEXT_CAP], "where": where}

    def take_events(self) -> list[list[str]]:
        """The arrows recorded since the last answer."""
        with self.trace._lock:
            events, self.trace.events = self.trace.events, []
        return [[e.source, e.target, e.label, e.kind, e.note] for e in events]

    def op_open_store(self, request: dict[str, Any]) -> None:
        """A fresh store for the next check (memory), or the shared one, recorded (postgres);
        the real clock again, whatever the last check left it at."""
        self.clock.set(None)
        if self.spec.store == StoreKind.MEMORY:
            self.raw = self.tree.module("infra").MemoryStore()
        else:
            self.raw = RunRecorder(self._shared_store())
        self._serve(self.raw)

    def op_open_bench(self, request: dict[str, Any]) -> str:
        """The store a long-lived bench (the dashboard's runs view) works on, opened once.

        Unlike open_store, nothing is recorded for tidying: the bench's runs are
        the learner's to keep. Answers which store it is.
        """
        if self.store is None:
            memory = self.spec.store == StoreKind.MEMORY
            self.raw = self.tree.module("infra").MemoryStore() if memory else self._shared_store()
            self._serve(self.raw)
        return self.spec.store

    def _shared_store(self) -> Any:
        """The tree's store on the spec's database, made once, answering (ping) now."""
        if self.shared is None:
            environ = {"DATABASE_URL": self.spec.database_url or ""}
            environ["DB_SCHEMA"] = self.spec.schema or self.tree.package
            self.shared = self.tree.module("infra").make_store(environ)
        self.shared.ping()
        return self.shared

    def _serve(self, raw: Any) -> None:
        """Point the traced store and the gateway at raw, recording into a fresh trace."""
        self.trace = Trace()
        if self.store is None or self.client is None:
            # One app for the host's life: a check gets a new store behind the same
            # traced wrapper, so the gateway is built (its routes compiled) only once.
            self.store = TracingStore(self.raw, self.trace)
            app = self.tree.module("gateway").create_app(self.store)
            self.client = TracingClient(app, self.trace)
        self.store.retarget(raw, self.trace)
        self.client.retarget(self.trace)

    def op_tidy(self, request: dict[str, Any]) -> None:
        """Cancel the runs the last check left pending (postgres; see tidy.py), on the real
        clock."""
        self.clock.set(None)
        if isinstance(self.raw, RunRecorder):
            self.raw.cancel_left_pending(self.tree)

    def op_http(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request through the tree's Flask app: status, text, JSON body, replayed."""
        if self.client is None:
            raise ValueError("open_store first")
        method, path = str(request.get("method", "GET")), str(request.get("path", "/"))
        response = self.client.request(method, path, request.get("body"))
        text = response.get_data(as_text=True)
        return {
            "status": response.status_code,
            "text": text[:TEXT_CAP],
            "json": response.get_json(silent=True),
            "replayed": response.headers.get("Idempotent-Replayed") == "true",
        }

    def op_store(self, request: dict[str, Any]) -> Any:
        """One of the Store's methods, traced as called by request["actor"]."""
        name = request.get("method")
        if name not in STORE_METHODS:
            raise ValueError(f"not a store method the checks use: {name!r}")
        args = list(request.get("args", []))
        if name == "transition" and len(args) == 3:
            args[1:] = [self._status(value) for value in args[1:]]
        store = self.store if request.get("traced", True) else self.raw
        with self.trace.acting_as(str(request.get("actor", "gateway"))):
            return getattr(store, name)(*args)

    def _status(self, value: Any) -> Any:
        try:
            return self.status(value)
        except ValueError:
            return value

    def op_clock(self, request: dict[str, Any]) -> None:
        """Every clock call of this process reads request["at"] from now on (null: the real
        clock again; see clock.py)."""
        self.clock.set(request.get("at"))

    def op_key(self, request: dict[str, Any]) -> str:
        """idempotency_key_for(session_id, client_message_id, message[, now=])."""
        keys = self.tree.module("shared.keys")
        args = (request.get("session_id"), request.get("client_message_id"), request["message"])
        now = request.get("now")
        return traced_key(self.trace, keys.idempotency_key_for, args, now, self.clock.at)

    def op_allowlist(self, request: dict[str, Any]) -> list[list[Any]]:
        """[from, to, can_transition(from, to)] for every pair of statuses."""
        can = self.tree.module("shared.states").can_transition
        return [[a.value, b.value, bool(can(a, b))] for a in self.status for b in self.status]

    def op_pending_runs(self, request: dict[str, Any]) -> Any:
        """The worker's query, as the worker lane."""
        worker = self.tree.module("worker")
        with self.trace.acting_as("worker"):
            return worker.pending_runs(self.store, int(request.get("limit", 100)))

    def op_batch(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        """Several requests in order, in one round trip: each one's {ok, value | error}."""
        calls = request.get("calls")
        if not isinstance(calls, list) or len(calls) > MAX_BATCH:
            raise ValueError(f"calls must be a list of at most {MAX_BATCH} requests")
        return [self.answer(call) if isinstance(call, dict) else {} for call in calls]

    def op_burst(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        """The same request on n threads released at once; with turns, the threads take
        turns line by line of the tree's code (turns.py)."""
        count = max(1, min(int(request.get("n", 2)), MAX_BURST))
        call = dict(request["call"])
        turns = Turns(count) if request.get("turns") is True else None
        start = threading.Barrier(count)
        answers: list[dict[str, Any]] = [{}] * count

        def one(index: int) -> None:
            if turns is None:
                start.wait()
                answers[index] = self.answer(call)
                return
            turns.enter(index)
            start.wait()
            sys.settrace(self._taking_turns(turns, index))
            try:
                answers[index] = self.answer(call)
            finally:
                sys.settrace(None)
                turns.leave(index)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
        previous = sys.getswitchinterval()
        sys.setswitchinterval(float(request.get("switch_interval", 1e-5)))
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(previous)
        return answers

    def _taking_turns(self, turns: Turns, me: int) -> Any:
        """A trace function that waits for thread me's turn before every line of the tree's
        own code, so the threads of a burst stop between any two of its lines."""
        root = str(self.tree.root)

        def on_line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                turns.line(me)
            return on_line

        def on_call(frame: Any, event: str, arg: Any) -> Any:
            return on_line if frame.f_code.co_filename.startswith(root) else None

        return on_call


class KeysHost(Host):
    """A second process of the same tree that only computes keys, as another gateway would.

    It imports the tree's package and shared/keys.py, nothing else, so it
    starts in a few hundredths of a second, and answers `key`, `batch` and `clock`.
    """

    OPS = frozenset({"key", "batch", "clock"})

    def __init__(self, tree: Tree, spec: HostSpec) -> None:
        self.tree = tree
        self.spec = spec
        self.trace = Trace()
        self.clock = HostClock()
        tree.module("shared.keys")

    def hello(self) -> dict[str, Any]:
        """The package, and the window the keys use."""
        return {"package": self.tree.package, "time_bucket_seconds": bucket_seconds(self.tree)}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer a key or a batch of keys; any other operation is refused."""
        if request.get("op") not in self.OPS:
            error = {"type": "ValueError", "message": "a keys host computes keys only", "where": ""}
            return {"ok": False, "error": error}
        return super().answer(request)
