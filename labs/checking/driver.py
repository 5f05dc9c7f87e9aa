"""The driver: runs the checks in the lab kit's process, which never imports the tree.

It starts a tree host through a launcher (launch.py), talks to it through a
HostSession (session.py: every request has a fresh id, host.py describes the
protocol) and decides each verdict from the answers alone. On Postgres the
driver reads what the tables hold over its own connection (database.py), so
no tree can lie about rows. Each check has a time limit: a check that hangs
becomes a failed result, its host is killed, and a new host serves the
checks that remain.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import time
from dataclasses import replace

from labs.term.i18n import _
from labs.trees.finding import Tree
from labs.untrusted import clean_text

from . import rules
from .context import CheckContext
from .database import Database
from .definition import Check, ExtraCheck, first_paragraph
from .errors import (
    CheckFailedError,
    HostError,
    HostGoneError,
    HostProtocolError,
    HostTimeoutError,
    RefusedError,
    TreeDoesNotImportError,
)
from .hints import hint_for, stuck_at
from .inputs import KeyedRandom
from .launch import ExecLauncher, ForkLauncher, default_launcher
from .marks import NO_ANSWER
from .protocol import KEYS_ONLY, Launcher, StoreKind, host_spec
from .result import CheckResult
from .session import START_TIMEOUT, HostSession
from .trace import Arrow, Event, unanswered

CHECK_TIMEOUT = 10.0  # seconds a check may take before it counts as hung
TIDY_TIMEOUT = 5.0


class Driver:
    """Runs checks one by one against a host it starts, restarts and finally stops."""

    def __init__(
        self,
        tree: Tree,
        store_kind: StoreKind,
        *,
        launcher: Launcher | None = None,
        database_url: str | None = None,
        schema: str | None = None,
        seed: int = 0,
        check_timeout: float = CHECK_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.tree = tree
        self.start_timeout = start_timeout
        self.store_kind = store_kind
        self.launcher = launcher or default_launcher()
        self.spec = host_spec(tree.root, tree.package, store_kind, database_url, schema)
        self.schema = self.spec.schema or tree.package
        self.rng = KeyedRandom(seed)  # the inputs: a stream whose key stays here
        self.check_timeout = check_timeout
        self.session: HostSession | None = None
        self.peer: HostSession | None = None  # a second process of the tree, for its keys
        self.peer_launched: HostSession | None = None  # the peer, before it said hello
        self.peer_spec = replace(self.spec, store=KEYS_ONLY, database_url=None)
        self.db: Database | None = None
        if store_kind == StoreKind.POSTGRES:
            if not database_url:
                raise TreeDoesNotImportError(
                    "--store postgres needs DATABASE_URL (or --database-url)"
                )
            self.db = Database(database_url, self.schema)

    def start(self) -> HostSession:
        """The running host, starting one if there is none."""
        if self.session is None:
            self.session = HostSession.start(self.launcher, self.spec, self.start_timeout)
        return self.session

    def peer_launcher(self) -> Launcher:
        """What launches the second process. A forked host shares the driver's interpreter
        state (Python's hash() secret among it), so that one is always exec'd: a fresh
        interpreter, as a second gateway instance would be."""
        if isinstance(self.launcher, ForkLauncher):
            environ = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
            return ExecLauncher(env=environ)
        return self.launcher

    def launch_second_process(self) -> None:
        """Launch the second process now, without waiting for its hello: launched before the
        first host has said hello, it imports while that one does. A launch that fails here
        is tried again, and fails with its reason, when a check asks for the process."""
        if self.peer is None and self.peer_launched is None:
            with contextlib.suppress(OSError):
                self.peer_launched = HostSession(self.peer_launcher().launch(self.peer_spec))

    def second_process(self) -> HostSession:
        """Another process of the same tree that computes keys, launched on first use unless
        launch_second_process() launched it already."""
        if self.peer is None:
            launched, self.peer_launched = self.peer_launched, None
            launched = launched or HostSession(self.peer_launcher().launch(self.peer_spec))
            self.peer = launched.greeted(self.peer_spec, self.start_timeout)
        self.peer.deadline = self.start().deadline
        return self.peer

    def check_store(self) -> None:
        """Open the store once before the checks: a database that is not ready says so."""
        session = self.start()
        session.deadline = time.monotonic() + self.start_timeout
        session.call("open_store")
        session.take_events()

    def run(self, check: Check | ExtraCheck, title: str) -> CheckResult:
        """Run one check within the time limit and return its result, titled as given."""
        started = time.perf_counter()
        result = CheckResult(check.key, check.number, title, test_code=what_it_does(check))
        session: HostSession | None = None
        try:
            session = self.start()
            session.process.mark_output()  # what the tree prints from here on is this check's
            session.deadline = time.monotonic() + self.check_timeout
            session.take_events()
            session.call("open_store")
            ctx = CheckContext(
                self.tree,
                self.store_kind,
                session,
                self.rng,
                self.db,
                session.statuses,
                self.second_process,
            )
            check.run(ctx)
            ctx.audit()
            result.passed = True
        except CheckFailedError as failure:
            result.expected, result.got, result.hint = failure.expected, failure.got, failure.hint
            result.rules = failure.rules
        except HostTimeoutError:
            result.expected = _("the check to finish within {seconds:g} s").format(
                seconds=self.check_timeout
            )
            result.got = _(
                "still running after {seconds:g} s (an endless loop, or a lock never released?): "
                "stopped, and the checks that remain run on a new host"
            ).format(seconds=self.check_timeout)
            result.rules = (rules.did_not_finish(check.key),)
            if session is not None:  # where the host was stuck, from the stacks it printed
                result.hint = stuck_at(self.tree, session.process.stderr_tail(), session.root)
                hung = unanswered(session.events)
                if hung is not None:  # the diagram ends with the call that never came back
                    waited = f"> {self.check_timeout:g} s"  # trace data: the note is worded
                    session.events.append(
                        Event(hung.target, hung.source, waited, Arrow.ERROR, NO_ANSWER)
                    )
            self.stop()
        except (HostGoneError, HostProtocolError) as error:
            tail = clean_text(session.process.stderr_tail().strip(), 400) if session else ""
            result.expected = _("the check to run to the end")
            result.got = _("the tree's host stopped answering ({error})").format(error=error)
            result.rules = (rules.host_stopped(check.key),)
            if tail:
                result.got += _("; its last output: {tail}").format(tail=tail)
            self.stop()
        except TreeDoesNotImportError as error:
            result.expected, result.got = _("the tree to import"), clean_text(error, 400)
            result.ran = False
        except RefusedError as error:
            result.expected = _("the check to run to the end")
            result.got = error.describe()
            result.rules = (rules.raised(check.key),)
        except Exception as error:  # a malformed answer: the tree's fault, never a crash
            result.expected = _("answers the check can read")
            result.got = clean_text(f"{type(error).__name__}: {error}", 300)
            result.rules = (rules.unreadable(check.key),)
        if not result.passed and result.hint is None:
            # An extra check's failures point at the check-3 TODO of its file.
            result.hint = hint_for(self.tree, check.default_hint, check.number or 3)
        result.duration_ms = (time.perf_counter() - started) * 1000
        if session is not None:
            result.events = session.take_events()
            result.output = clean_text(session.process.output_since_mark(), keep_newlines=True)
        self.tidy()
        return result

    def tidy(self) -> None:
        """On Postgres, cancel the runs the check left pending (see tidy.py)."""
        if self.store_kind != StoreKind.POSTGRES or self.session is None:
            return
        self.session.deadline = time.monotonic() + TIDY_TIMEOUT
        try:
            self.session.call("tidy")
        except (RefusedError, HostError):
            self.stop()
        if self.session is not None:
            self.session.take_events()

    def stop(self) -> None:
        """Kill the hosts, if they run."""
        if self.session is not None:
            self.session.kill()
            self.session = None
        for peer in (self.peer, self.peer_launched):
            if peer is not None:
                peer.kill()
        self.peer = self.peer_launched = None

    def close(self) -> None:
        """Stop the hosts and close the driver's database connection."""
        self.stop()
        if self.db is not None:
            self.db.close()


def what_it_does(check: Check | ExtraCheck) -> str:
    """What a check does, in the reader's language: the first paragraph of its docstring."""
    first = first_paragraph(inspect.getdoc(check.run) or "")
    return _(first) if first else _(check.title)
