"""The tree host: a child process that imports one tree and answers the driver's requests.

`python -m labs.checking.host` is its exec'd form (launch.py starts it; it is
the kit's own, not a command for people). The driver (driver.py) never
imports a learner's tree; it sends requests here, one JSON object per line,
and reads one answer line per request:

    request  {"id": "<token>", "op": "<op>", "stack_after": <seconds>, ...arguments}
    answer   {"id": "<same token>", "ok": true, "value": ..., "events": [...]}
          or {"id": "<same token>", "ok": false,
              "error": {"type": "DuplicateMessageError", "message": "...", "where": "file:line"},
              "events": [...]}

A request still unanswered after stack_after seconds (when given) makes the host print
every thread's stack to its output (faulthandler), where the driver finds the line of
the tree it was stuck on, and send the arrows recorded so far as a partial answer,
{"id": "<same token>", "partial": true, "events": [...]}, so the diagram of a check
that hangs shows the call it hung in. The first line the host writes, unasked, has id
"hello": ok with {"package", "statuses", "time_bucket_seconds", "root"} once the tree
imported, or an error of type TreeLoadError saying why it did not. `events` are the
trace arrows recorded while answering, as [source, target, label, kind, note] (lanes
client, gateway, store, worker; note is "" or one of labs.checking.marks.NOTES). Records
come back as their JSON dump (model_dump).

A host started with store "keys" imports only the tree's package and
shared/keys.py and answers only `key`, `batch` and `clock`: check 3 starts one as a
second gateway process, to compare the keys two processes compute.

Operations (ops.py answers them):
    open_store                       a fresh store (memory) or the shared one (postgres)
    open_bench                       the store a long-lived bench works on, opened once:
                                     "memory" or "postgres" (the dashboard's runs view)
    tidy                             cancel the runs the last check left pending (postgres)
    http {method, path, body}        through the tree's Flask app: {status, text, json, replayed}
    store {method, args, actor, traced}   one of the Store's methods
    key {session_id, client_message_id, message, now}   idempotency_key_for
    clock {at}                       every clock call of the process (time.time, time.time_ns,
                                     datetime.now, ...) reads `at` (seconds since the epoch)
                                     until moved again; at null, or open_store, or tidy: the
                                     real clock (clock.py)
    allowlist                        [[from, to, can_transition], ...] for all status pairs
    pending_runs {limit}             the worker's query
    batch {calls}                    several requests in order, in one round trip:
                                     a list of {ok, value | error}
    burst {n, call, turns}           the same call on n threads at once: a list of
                                     {ok, value | error}; with turns true the threads take
                                     turns line by line of the tree's code (turns.py)

Whatever the tree prints goes to this process's fd 1 and 2, which the
launcher connects to a capped pipe: it never reaches the driver's terminal,
nor the answers pipe. Everything here is the learner's to change at run
time; the driver treats every answer as a claim to check, never as a verdict.
"""

from __future__ import annotations

import argparse
import faulthandler
import gc
import io
import json
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from labs.trees.finding import Tree, TreeLoadError, import_package, import_tree, package_for

from .libraries import preimport_libraries
from .ops import TEXT_CAP, Host, KeysHost
from .protocol import HELLO, KEYS_ONLY, HostSpec, HostStore, StoreKind


def die_with_parent() -> None:
    """Ask Linux to kill this host when the driver that started it dies (killed, timed out).

    A host stuck in a learner's endless loop never reads the closed requests
    pipe, so without this it would outlive its driver. Linux sends the signal
    when the thread that started the host ends, so a threaded program starts
    its hosts from a thread that lives as long as they should (the dashboard's
    web/workbench/tree_link.py does). Elsewhere: a no-op.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    # The driver died before the request took effect: the host was handed to another parent.
    # (Not "is the parent pid 1": in a sandbox's PID namespace the parent is pid 1.)
    if os.getppid() != parent:
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
        if spec.store == KEYS_ONLY:
            import_package(tree)
            host: Host = KeysHost(tree, spec)
        else:
            # The libraries' imports make some hundred thousand objects that all stay, so
            # collecting them, then or later, finds nothing: paused, then frozen, they
            # import about a tenth faster. The tree's own modules import with the collector
            # running, as any of the learner's code runs.
            gc.disable()
            try:
                preimport_libraries(spec.store)
                gc.freeze()
            finally:
                gc.enable()
            import_tree(tree)
            host = Host(tree, spec)
    except BaseException as error:  # even SystemExit: the driver must hear why
        text = (
            str(error) if isinstance(error, TreeLoadError) else f"{type(error).__name__}: {error}"
        )
        where = _where_it_broke(error, root)
        error_answer = {"type": "TreeLoadError", "message": text[:TEXT_CAP], "where": where}
        _write(answers, {"id": HELLO, "ok": False, "error": error_answer, "events": []})
        return 0
    gc.freeze()  # the libraries and the tree stay: collections skip them from now on
    _write(answers, {"id": HELLO, "ok": True, "value": host.hello(), "events": []})
    writing = threading.Lock()  # the answer and a partial one never interleave
    running: list[object] = [None]  # the request being answered, changed under writing

    def send_events_so_far(request: dict[str, Any]) -> None:
        with writing:
            if running[0] is not request:  # answered meanwhile: its arrows went with it
                return
            # Dumped from this thread, which holds the GIL, so no thread's frames change
            # meanwhile: faulthandler's own timer dumps without it, and crashed the host
            # when a thread started or ended at that moment.
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            events = host.take_events()
            if events:
                _write(answers, {"id": request.get("id"), "partial": True, "events": events})

    # A request that never ends leaves every thread's stack in the capped output, and its
    # arrows so far with the driver.
    late = LateRequests(send_events_so_far)
    for line in requests:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict):
            continue
        stack_after = request.get("stack_after")
        with writing:
            running[0] = request
        if isinstance(stack_after, int | float) and stack_after > 0:
            late.watch(request, stack_after)
        answer = host.answer(request)
        late.watch(None)
        with writing:
            running[0] = None
            answer["id"] = request.get("id")
            answer["events"] = host.take_events()
            _write(answers, answer)
    return 0


class LateRequests:
    """One thread, for the host's life, that calls on_late(request) when a request it was
    told to watch is still running after its stack_after seconds.

    A timer thread per request cost more than most answers take. This one sleeps until
    the watched request falls due, and is woken only when a request begins that falls
    due before the moment it sleeps until: a request that ends in time costs two
    assignments under a lock.
    """

    def __init__(self, on_late: Callable[[dict[str, Any]], None]) -> None:
        self._on_late = on_late
        self._changed = threading.Condition()
        self._request: dict[str, Any] | None = None
        self._due = 0.0
        self._sleeps_until: float | None = 0.0  # None: until woken; a past moment: awake
        threading.Thread(target=self._run, name="late-requests", daemon=True).start()

    def watch(self, request: dict[str, Any] | None, after: float = 0.0) -> None:
        """Watch request from now on, due after `after` seconds; None: watch nothing."""
        with self._changed:
            self._request, self._due = request, time.monotonic() + after
            sleeps_until = self._sleeps_until
            if request is not None and (sleeps_until is None or sleeps_until > self._due):
                self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while self._request is None or self._due > time.monotonic():
                    self._sleeps_until = None if self._request is None else self._due
                    until = self._sleeps_until
                    self._changed.wait(None if until is None else until - time.monotonic())
                request, self._request = self._request, None
            self._on_late(request)  # outside the lock: on_late takes the answers' lock


def _where_it_broke(error: BaseException, root: Path) -> str:
    """The tree's file:line where importing it failed: a syntax error's own line, else the
    deepest frame inside the tree ("" when none is)."""
    cause = error.__cause__ or error
    if isinstance(cause, SyntaxError) and cause.filename and cause.lineno:
        places = [(cause.filename, cause.lineno)]
    else:
        frames = traceback.extract_tb(cause.__traceback__)
        places = [(frame.filename, frame.lineno or 1) for frame in reversed(frames)]
    for filename, line in places:
        path = Path(filename)
        if path.is_relative_to(root):
            return f"{path.relative_to(root).as_posix()}:{line}"
    return ""


def _write(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(json.dumps(message, default=str).encode() + b"\n")
    stream.flush()


def read_secret(fd: int) -> str:
    """What the launcher wrote on the inherited pipe fd (a database URL), the pipe then closed."""
    with os.fdopen(fd, "rb") as pipe:
        return pipe.read().decode()


def main(argv: list[str] | None = None) -> int:
    """python -m labs.checking.host: the exec'd form of the host (see launch.py)."""
    parser = argparse.ArgumentParser(prog="python -m labs.checking.host")
    parser.add_argument("--tree", required=True, type=Path)
    stores = [kind.value for kind in StoreKind] + [KEYS_ONLY]
    parser.add_argument("--store", choices=stores, default=StoreKind.MEMORY.value)
    parser.add_argument("--package", default="")
    parser.add_argument("--database-url-fd", type=int)
    parser.add_argument("--schema")
    parser.add_argument("--requests-fd", type=int, required=True)
    parser.add_argument("--answers-fd", type=int, required=True)
    args = parser.parse_args(argv)
    url = read_secret(args.database_url_fd) if args.database_url_fd is not None else None
    store: HostStore = KEYS_ONLY if args.store == KEYS_ONLY else StoreKind(args.store)
    spec = HostSpec(args.tree, store, url, args.schema, args.package)
    return serve(spec, args.requests_fd, args.answers_fd)


if __name__ == "__main__":
    raise SystemExit(main())
