"""The dashboard's line to one tree: a host process it talks to, killed when it stops answering.

The runs view never imports a learner's tree. Each bench keeps one tree
host (labs/checking/host.py), exec'd as its own process, and sends it the
protocol's requests: the gateway's HTTP requests, the store's methods, the
worker's query. Every request has a time limit. A tree that does not answer
in time (an endless loop, a lock never released) has its process killed,
and the request gets a TreeNotAnsweringError saying so, at once; the next
request starts a new host. A request that finds the line taken waits no
longer than its own time limit either, then gets a TreeBusyError (the tree
may be fine, only slow to reach under many requests), so no page ever waits
on a learner's loop, or on a queue, for more than that.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from labs.checking.api import (
    ExecLauncher,
    HostError,
    HostProcess,
    HostSession,
    HostSpec,
    HostTimeoutError,
    Launcher,
    RefusedError,
    TreeDoesNotImportError,
)
from labs.untrusted import clean_text


class TreeNotAnsweringError(Exception):
    """The tree's host did not answer in time, or stopped: it was killed, and will be restarted.

    seconds is the time limit when it timed out (None when its process exited
    or answered nonsense); said is what its process printed last, cleaned.
    """

    def __init__(self, seconds: float | None, said: str = "") -> None:
        self.seconds = seconds
        self.said = said
        what = f"no answer within {seconds:g} s" if seconds is not None else "its process stopped"
        super().__init__(what + (f": {said}" if said else ""))


class TreeBusyError(TreeNotAnsweringError):
    """The line to the tree stayed taken by other requests for the whole time limit.

    Nothing was sent, and the host was not stopped: the tree may be fine, only
    busy (many pages polling at once) or held by a request that will time out.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.args = (f"the line to the tree stayed busy for {seconds:g} s",)


@contextlib.contextmanager
def answering(session: HostSession, seconds: float, stop: Callable[[], None]) -> Iterator[None]:
    """Turn a host that gave no answer within seconds, or stopped, into TreeNotAnsweringError,
    once stop() has ended it."""
    try:
        yield
    except HostTimeoutError:
        stop()
        raise TreeNotAnsweringError(seconds) from None
    except HostError:
        said = clean_text(session.process.stderr_tail().strip(), 400)
        stop()
        raise TreeNotAnsweringError(None, said) from None


class SteadyLauncher:
    """Starts every host from one thread of its own, which lives until close().

    A host asks Linux to kill it when the thread that started it ends (see
    labs.checking.host.die_with_parent): started from a request's thread, it
    would die with that request. Started from this thread, it dies when the
    dashboard does, never on its own account.
    """

    def __init__(self, launcher: Launcher, name: str) -> None:
        self.launcher = launcher
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def launch(self, request: HostSpec) -> HostProcess:
        """Start a host from the launcher's own thread, and wait for it."""
        return self._thread.submit(self.launcher.launch, request).result()

    def close(self) -> None:
        """Let the thread end (the hosts it started are killed by their links)."""
        self._thread.shutdown(wait=False)


class TreeLink:
    """One tree host, started on first use and after each stop, one request at a time.

    When the store of spec does not open (Postgres down, its tables missing),
    the host is started again on fallback, if given, and `refused` keeps why;
    try_asked() tries the store of spec again later (after a migration, say).
    on_start hears which store a new host opened ("memory" or "postgres"),
    each time one starts: after a restart, a memory store is empty again.
    """

    def __init__(
        self,
        spec: HostSpec,
        *,
        timeout: float,
        start_timeout: float,
        fallback: HostSpec | None = None,
        launcher: Launcher | None = None,
        on_start: Callable[[str], None] = lambda kind: None,
    ) -> None:
        self.spec = spec
        self.asked = spec  # the store wanted: spec is the fallback's once that was refused
        self.fallback = fallback
        self.refused: RefusedError | None = None
        self.timeout = timeout
        self.start_timeout = start_timeout
        # Exec'd, never forked: the dashboard is a threaded server, and a forked child
        # could inherit a lock another thread held at that moment.
        self.launcher = SteadyLauncher(launcher or ExecLauncher(), f"host-{spec.package}")
        self.on_start = on_start
        self.starts = 0  # hosts started so far: more than one means the tree was restarted
        self._tried = time.monotonic()  # when the store asked for was last tried
        self._session: HostSession | None = None
        self._lock = threading.Lock()

    def call(self, op: str, **args: Any) -> Any:
        """Send one request (quiet: nothing traced) and return its value.

        Raises RefusedError when the tree raised, TreeNotAnsweringError when it did
        not answer in time (or its process stopped), TreeBusyError when other
        requests kept the line that long, TreeDoesNotImportError when a new host
        could not import it.
        """
        if not self._lock.acquire(timeout=self.timeout):
            # Other requests hold the line: if one hangs, its own time limit stops the host.
            raise TreeBusyError(self.timeout)
        try:
            session = self._session or self._start()
            session.deadline = time.monotonic() + self.timeout
            try:
                with answering(session, self.timeout, self._stop):
                    value = session.call(op, quiet=True, **args)
            finally:
                session.events.clear()  # the bench keeps no traces
            return value
        finally:
            self._lock.release()

    def _open(self, spec: HostSpec) -> tuple[HostSession, str]:
        """A new host on spec and the kind of store it opened; RefusedError if none opened."""
        session = HostSession.start(self.launcher, spec, self.start_timeout)
        session.deadline = time.monotonic() + self.start_timeout
        try:
            with answering(session, self.start_timeout, session.kill):
                kind = str(session.call("open_bench", quiet=True))
        except RefusedError:  # the store did not open
            session.kill()
            raise
        return session, kind

    def _start(self) -> HostSession:
        """A new host, its store opened for a bench; the caller holds the lock."""
        try:
            session, kind = self._open(self.spec)
        except RefusedError as refused:
            if self.fallback is None:
                raise
            self.refused, self.spec, self.fallback = refused, self.fallback, None
            self._tried = time.monotonic()
            return self._start()
        self._session = session
        self.starts += 1
        self.on_start(kind)
        return session

    def try_asked(self, every: float) -> bool:
        """On the fallback, try the store asked for again (at most once every `every` s).

        True when it opened: the fallback's host is stopped, and with it what its
        store held. A store that still refuses leaves everything as it was, with
        `refused` saying why this time.
        """
        if self.refused is None or time.monotonic() - self._tried < every:
            return False
        if not self._lock.acquire(timeout=self.timeout):
            return False  # the line is busy: try again on a later page
        try:
            self._tried = time.monotonic()
            try:
                session, kind = self._open(self.asked)
            except RefusedError as refused:
                self.refused = refused
                return False
            except (TreeNotAnsweringError, TreeDoesNotImportError):
                return False
            self._stop()
            self._session, self.spec, self.refused = session, self.asked, None
            self.starts += 1
            self.on_start(kind)
            return True
        finally:
            self._lock.release()

    def open(self) -> None:
        """Start the host now if none runs; raises what call() raises when it cannot."""
        if not self._lock.acquire(timeout=self.timeout):
            raise TreeBusyError(self.timeout)
        try:
            if self._session is None:
                self._start()
        finally:
            self._lock.release()

    def _stop(self) -> None:
        if self._session is not None:
            self._session.kill()
            self._session = None

    def close(self) -> None:
        """Kill the host, if one runs (the dashboard is shutting down)."""
        # Not under the lock: a request stuck on a hung host must not keep the host alive.
        session, self._session = self._session, None
        if session is not None:
            session.kill()
        self.launcher.close()
