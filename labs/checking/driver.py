"""The driver: runs the checks in the lab kit's process, which never imports the tree.

It starts a tree host through a launcher (launch.py), sends it requests
(host.py describes the protocol) and decides each verdict from the answers
alone. Every request carries a fresh random id, and an answer must carry the
same id: lines a tree writes on its own can only break its run, never pass a
check. On Postgres the driver reads what the tables hold over its own
connection, so no tree can lie about rows. Each check has a time limit: a
check that hangs becomes a failed row, its host is killed, and a new host
serves the checks that remain.
"""

from __future__ import annotations

import inspect
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labs.term.i18n import _
from labs.trees.finding import Tree

from .context import CheckContext, CheckFailed, Refused
from .hints import Hint, hint_for
from .launch import (
    HostError,
    HostGone,
    HostProcess,
    HostProtocolError,
    HostSpec,
    HostTimeout,
    Launcher,
    default_launcher,
    host_spec,
)
from .trace import Event, clean, events_from

CHECK_TIMEOUT = 10.0  # seconds a check may take before it counts as hung
START_TIMEOUT = 60.0  # seconds a host may take to import the tree
TIDY_TIMEOUT = 5.0


class TreeDoesNotImport(Exception):
    """The host could not import the tree: the reason, as the host told it."""


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
        """Launch a host and wait for its hello; TreeDoesNotImport if the tree would not."""
        session = cls(launcher.launch(spec))
        try:
            answer = session.process.receive(timeout)
        except HostError as error:
            tail = clean(session.process.stderr_tail().strip(), 600)
            session.kill()
            why = (
                _(
                    "it did not finish importing within {seconds:g} s (a loop at module level?)"
                ).format(seconds=timeout)
                if isinstance(error, HostTimeout)
                else _("its process exited while importing it")
            )
            if tail:
                why += _("; its last output: {tail}").format(tail=tail)
            raise TreeDoesNotImport(why) from None
        if answer.get("id") != "hello" or answer.get("ok") is not True:
            session.kill()
            raise TreeDoesNotImport(
                Refused(answer.get("error")).message or "no hello from the host"
            )
        value = answer.get("value")
        session.hello = value if isinstance(value, dict) else {}
        return session

    @property
    def statuses(self) -> tuple[str, ...]:
        """The statuses the tree declares, as it said in its hello."""
        found = self.hello.get("statuses")
        return tuple(clean(s, 40) for s in found) if isinstance(found, list) else ()

    def call(self, op: str, **args: Any) -> Any:
        """Send one request and return its value; Refused if the tree raised an error."""
        token = secrets.token_hex(8)
        self.process.send({"id": token, "op": op, **args})
        answer = self.process.receive(max(self.deadline - time.monotonic(), 0.0))
        if answer.get("id") != token:
            raise HostProtocolError("an answer to a request the driver never sent")
        self.events.extend(events_from(answer.get("events")))
        if answer.get("ok") is True:
            return answer.get("value")
        raise Refused(answer.get("error"))

    def take_events(self) -> list[Event]:
        """The arrows collected since the last call to this."""
        events, self.events = self.events, []
        return events

    def kill(self) -> None:
        """Kill the host and all it started."""
        self.process.kill()


class Database:
    """The driver's own connection to Postgres: what the tables hold, in the tree's schema."""

    def __init__(self, url: str, schema: str) -> None:
        import psycopg2
        from sqlalchemy.engine import make_url

        from labs.pg.catalog import psycopg2_url

        plain_url = make_url(psycopg2_url(url)).set(drivername="postgresql")
        self.connection = psycopg2.connect(plain_url.render_as_string(hide_password=False))
        self.connection.autocommit = True
        self.schema = schema

    def _one(self, query: str, *params: Any) -> Any:
        from psycopg2 import sql

        with self.connection.cursor() as cursor:
            cursor.execute(sql.SQL(query).format(schema=sql.Identifier(self.schema)), params)
            return cursor.fetchall()

    def count(self, table: str, idempotency_key: str) -> int:
        """Rows of runs holding this key."""
        rows = self._one(
            "SELECT count(*) FROM {schema}.runs WHERE idempotency_key = %s", idempotency_key
        )
        return int(rows[0][0])

    def status(self, run_id: str) -> str:
        """The run's status column, or 'missing'."""
        rows = self._one("SELECT status FROM {schema}.runs WHERE id = %s", run_id)
        return str(rows[0][0]) if rows else "missing"

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """The status column of each of these runs that exists."""
        rows = self._one("SELECT id, status FROM {schema}.runs WHERE id = ANY(%s)", run_ids)
        return {str(run_id): str(status) for run_id, status in rows}

    def contents(self, run_id: str, seq: int) -> list[str]:
        """The contents of the run's messages at seq."""
        rows = self._one(
            "SELECT content FROM {schema}.messages WHERE run_id = %s AND seq = %s"
            " ORDER BY created_at",
            run_id,
            seq,
        )
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


@dataclass
class Outcome:
    """One check's verdict as the driver decided it."""

    passed: bool
    duration_ms: float
    expected: str = ""
    got: str = ""
    hint: Hint | None = None
    events: list[Event] = field(default_factory=list)
    test_code: str = ""


class Driver:
    """Runs checks one by one against a host it starts, restarts and finally stops."""

    def __init__(
        self,
        tree: Tree,
        store_kind: str,
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
        self.rng = random.Random(seed)
        self.check_timeout = check_timeout
        self.session: HostSession | None = None
        self.db: Database | None = None
        if store_kind == "postgres":
            if not database_url:
                raise TreeDoesNotImport("--store postgres needs DATABASE_URL (or --database-url)")
            self.db = Database(database_url, self.schema)

    def start(self) -> HostSession:
        """The running host, starting one if there is none; opens the store once to try it."""
        if self.session is None:
            self.session = HostSession.start(self.launcher, self.spec, self.start_timeout)
        return self.session

    def check_store(self) -> None:
        """Open the store once before the checks: a database that is not ready says so."""
        session = self.start()
        session.deadline = time.monotonic() + self.start_timeout
        session.call("open_store")
        session.take_events()

    def run(self, run: Callable[[CheckContext], None], number: int, default_hint: str) -> Outcome:
        """Run one check within the time limit and return its verdict."""
        started = time.perf_counter()
        outcome = Outcome(False, 0.0, test_code=_source(run))
        session: HostSession | None = None
        try:
            session = self.start()
            session.deadline = time.monotonic() + self.check_timeout
            session.take_events()
            session.call("open_store")
            ctx = CheckContext(
                self.tree, self.store_kind, session, self.rng, self.db, session.statuses
            )
            run(ctx)
            outcome.passed = True
        except CheckFailed as failure:
            outcome.expected, outcome.got, outcome.hint = (
                failure.expected,
                failure.got,
                failure.hint,
            )
        except HostTimeout:
            outcome.expected = _("the check to finish within {seconds:g} s").format(
                seconds=self.check_timeout
            )
            outcome.got = _(
                "still running after {seconds:g} s (an endless loop, or a lock never released?): "
                "stopped, and the checks that remain run on a new host"
            ).format(seconds=self.check_timeout)
            self.stop()
        except (HostGone, HostProtocolError) as error:
            tail = clean(session.process.stderr_tail().strip(), 400) if session else ""
            outcome.expected = _("the check to run to the end")
            outcome.got = _("the tree's host stopped answering ({error})").format(error=error)
            if tail:
                outcome.got += _("; its last output: {tail}").format(tail=tail)
            self.stop()
        except TreeDoesNotImport as error:
            outcome.expected, outcome.got = _("the tree to import"), clean(error, 400)
        except Refused as error:
            outcome.expected = _("the check to run to the end")
            outcome.got = error.describe()
        except Exception as error:  # a malformed answer: the tree's fault, never a crash
            outcome.expected = _("answers the check can read")
            outcome.got = clean(f"{type(error).__name__}: {error}", 300)
        if not outcome.passed and outcome.hint is None:
            outcome.hint = hint_for(self.tree, default_hint, number)
        outcome.duration_ms = (time.perf_counter() - started) * 1000
        if session is not None:
            outcome.events = session.take_events()
        self.tidy()
        return outcome

    def tidy(self) -> None:
        """On Postgres, cancel the runs the check left pending (see tidy.py)."""
        if self.store_kind != "postgres" or self.session is None:
            return
        self.session.deadline = time.monotonic() + TIDY_TIMEOUT
        try:
            self.session.call("tidy")
        except (Refused, HostError):
            self.stop()
        self.session.take_events() if self.session else None

    def stop(self) -> None:
        """Kill the host, if one runs."""
        if self.session is not None:
            self.session.kill()
            self.session = None

    def close(self) -> None:
        """Stop the host and close the driver's database connection."""
        self.stop()
        if self.db is not None:
            self.db.close()


def _source(run: Callable[..., Any]) -> str:
    try:
        return inspect.getsource(run)
    except (OSError, TypeError):
        return ""
