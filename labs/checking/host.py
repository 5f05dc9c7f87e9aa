"""The tree host: a child process that imports one tree and answers the driver's requests.

The driver (driver.py) never imports a learner's tree; it sends requests here,
one JSON object per line, and reads one answer line per request:

    request  {"id": "<token>", "op": "<op>", ...arguments}
    answer   {"id": "<same token>", "ok": true, "value": ..., "events": [...]}
          or {"id": "<same token>", "ok": false,
              "error": {"type": "DuplicateMessageError", "message": "...", "where": "file:line"},
              "events": [...]}

The first line the host writes, unasked, has id "hello": ok with
{"package", "statuses"} once the tree imported, or an error of type
TreeLoadError saying why it did not. `events` are the trace arrows recorded
while answering, as [source, target, label, kind] (lanes client, gateway,
store, worker). Records come back as their JSON dump (model_dump).

Operations:
    open_store                       a fresh store (memory) or the shared one (postgres)
    tidy                             cancel the runs the last check left pending (postgres)
    http {method, path, body}        through the tree's Flask app: {status, text, json, replayed}
    store {method, args, actor, traced}   one of the Store's methods
    key {session_id, client_message_id, message, now}   idempotency_key_for
    allowlist                        [[from, to, can_transition], ...] for all status pairs
    pending_runs {limit}             the worker's query
    batch {calls}                    several requests in order, in one round trip:
                                     a list of {ok, value | error}
    burst {n, call, pause}           the same call on n threads at once: a list of
                                     {ok, value | error}; each thread sleeps `pause` s on
                                     every line of the tree's code, forcing thread switches

Whatever the tree prints goes to this process's fd 1 and 2, which the
launcher connects to a capped pipe: it never reaches the driver's terminal,
nor the answers pipe. Everything here is the learner's to change at run
time; the driver treats every answer as a claim to check, never as a verdict.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import sys
import threading
import time
import traceback
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO

from labs.trees.finding import Tree, TreeLoadError, import_tree, package_for

from .launch import HostSpec
from .tidy import RunRecorder
from .trace import Trace, TracingClient, TracingStore

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
MAX_BURST = 64
MAX_BATCH = 256
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
        self.status = tree.module("shared.states").RunStatus

    def hello(self) -> dict[str, Any]:
        """What the driver learns once the tree imported."""
        return {"package": self.tree.package, "statuses": [s.value for s in self.status]}

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
        return [[e.source, e.target, e.label, e.kind] for e in events]

    def op_open_store(self, request: dict[str, Any]) -> None:
        infra = self.tree.module("infra")
        if self.spec.store == "memory":
            self.raw = infra.MemoryStore()
        else:
            if self.shared is None:
                environ = {"DATABASE_URL": self.spec.database_url or ""}
                environ["DB_SCHEMA"] = self.spec.schema or self.tree.package
                self.shared = infra.make_store(environ)
            self.shared.ping()
            self.raw = RunRecorder(self.shared)
        self.trace = Trace()
        if self.store is None or self.client is None:
            # One app for the host's life: a check gets a new store behind the same
            # traced wrapper, so the gateway is built (its routes compiled) only once.
            self.store = TracingStore(self.raw, self.trace)
            app = self.tree.module("gateway").create_app(self.store)
            self.client = TracingClient(app, self.trace)
        self.store.retarget(self.raw, self.trace)
        self.client.retarget(self.trace)

    def op_tidy(self, request: dict[str, Any]) -> None:
        if isinstance(self.raw, RunRecorder):
            self.raw.cancel_left_pending(self.tree)

    def op_http(self, request: dict[str, Any]) -> dict[str, Any]:
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

    def op_key(self, request: dict[str, Any]) -> str:
        keys = self.tree.module("shared.keys")
        args = (request.get("session_id"), request.get("client_message_id"), request["message"])
        if request.get("now") is None:
            return str(keys.idempotency_key_for(*args))
        return str(keys.idempotency_key_for(*args, now=request["now"]))

    def op_allowlist(self, request: dict[str, Any]) -> list[list[Any]]:
        can = self.tree.module("shared.states").can_transition
        return [[a.value, b.value, bool(can(a, b))] for a in self.status for b in self.status]

    def op_pending_runs(self, request: dict[str, Any]) -> Any:
        worker = self.tree.module("worker")
        with self.trace.acting_as("worker"):
            return worker.pending_runs(self.store, int(request.get("limit", 100)))

    def op_batch(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        calls = request.get("calls")
        if not isinstance(calls, list) or len(calls) > MAX_BATCH:
            raise ValueError(f"calls must be a list of at most {MAX_BATCH} requests")
        return [self.answer(call) if isinstance(call, dict) else {} for call in calls]

    def op_burst(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        count = max(1, min(int(request.get("n", 2)), MAX_BURST))
        call = dict(request["call"])
        pause = min(max(float(request.get("pause", 0.0)), 0.0), 0.01)
        start = threading.Barrier(count)
        answers: list[dict[str, Any]] = [{}] * count
        tracer = self._pauser(pause) if pause else None

        def one(index: int) -> None:
            start.wait()
            sys.settrace(tracer)
            try:
                answers[index] = self.answer(call)
            finally:
                sys.settrace(None)

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

    def _pauser(self, pause: float) -> Any:
        """A trace function that sleeps on every line of the tree's own code.

        Sleeping hands the processor to the other threads of the burst, so
        each thread stops between any two lines of the tree: a check and an
        insert that are not done under one lock are caught in between.
        """
        root = str(self.tree.root)

        def on_line(frame: Any, event: str, arg: Any) -> Any:
            if event == "line":
                time.sleep(pause)
            return on_line

        def on_call(frame: Any, event: str, arg: Any) -> Any:
            return on_line if frame.f_code.co_filename.startswith(root) else None

        return on_call


def die_with_parent() -> None:
    """Ask Linux to kill this host when the driver that started it dies (killed, timed out).

    A host stuck in a learner's endless loop never reads the closed requests
    pipe, so without this it would outlive its driver. Elsewhere: a no-op.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the driver died before the request took effect
        os._exit(0)


def serve(spec: HostSpec, requests_fd: int, answers_fd: int, output_fd: int | None = None) -> int:
    """Import the tree, say hello, then answer requests until the requests pipe closes."""
    die_with_parent()
    if output_fd is not None:  # forked: point fd 1 and 2 at the capped pipe
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), line_buffering=True)
    requests = os.fdopen(requests_fd, "rb")
    answers = os.fdopen(answers_fd, "wb")
    root = Path(spec.tree).resolve()
    tree = Tree(name=root.name, package=spec.package or package_for(root), root=root)
    try:
        import_tree(tree)
        host = Host(tree, spec)
    except BaseException as error:  # even SystemExit: the driver must hear why
        text = (
            str(error) if isinstance(error, TreeLoadError) else f"{type(error).__name__}: {error}"
        )
        error_answer = {"type": "TreeLoadError", "message": text[:TEXT_CAP], "where": ""}
        _write(answers, {"id": "hello", "ok": False, "error": error_answer, "events": []})
        return 0
    gc.freeze()  # the libraries and the tree stay: collections skip them from now on
    _write(answers, {"id": "hello", "ok": True, "value": host.hello(), "events": []})
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict):
            continue
        answer = host.answer(request)
        answer["id"] = request.get("id")
        answer["events"] = host.take_events()
        _write(answers, answer)
    return 0


def _write(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(json.dumps(message, default=str).encode() + b"\n")
    stream.flush()


def main(argv: list[str] | None = None) -> int:
    """python -m labs.checking.host: the exec'd form of the host (see launch.py)."""
    parser = argparse.ArgumentParser(prog="python -m labs.checking.host")
    parser.add_argument("--tree", required=True, type=Path)
    parser.add_argument("--store", choices=["memory", "postgres"], default="memory")
    parser.add_argument("--package", default="")
    parser.add_argument("--database-url")
    parser.add_argument("--schema")
    parser.add_argument("--requests-fd", type=int, required=True)
    parser.add_argument("--answers-fd", type=int, required=True)
    args = parser.parse_args(argv)
    spec = HostSpec(args.tree, args.store, args.database_url, args.schema, args.package)
    return serve(spec, args.requests_fd, args.answers_fd)


if __name__ == "__main__":
    raise SystemExit(main())
