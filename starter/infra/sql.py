"""The Postgres store: the same Store, with the database as the arbiter, in the tree's schema."""

import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import psycopg2
from sqlalchemy import Executable, bindparam, create_engine, exc, func, text, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.engine import make_url
from sqlalchemy.orm import configure_mappers
from sqlmodel import Session, col, select

from ..shared import errors
from ..shared.schema import ChatSession, Message, Run, new_id, utc_now
from ..shared.states import RunStatus, ensure_transition
from .store import RunCreated

log = logging.getLogger(__name__)
TREE = __name__.partition(".")[0]
# What a store operation may raise: SQLAlchemy's errors, the driver's own (a dead connection
# can raise them as it goes back to the pool) and ValueError (psycopg2's, for a NUL in text).
DRIVER_ERRORS = (exc.SQLAlchemyError, psycopg2.Error, ValueError)

# The gateway's one statement, built once: a key already stored makes it insert and return nothing.
COLUMNS = ("id", "session_id", "status", "idempotency_key", "input", "created_at", "updated_at")
NEW_RUN = insert(Run).values({name: bindparam(f"new_{name}") for name in COLUMNS})
INSERT_RUN = NEW_RUN.on_conflict_do_nothing(index_elements=["idempotency_key"]).returning(
    col(Run.id)
)
INSERT_RUN_ANYWAY = NEW_RUN.returning(col(Run.id))  # into a table without the unique key
NO_UNIQUE_KEY = (
    'runs.idempotency_key is not unique in schema "%s", so a retry can make a second run: declare '
    "it unique at TODO(check 3) in shared/schema.py, then generate and apply a migration"
)
ALL_TABLES = text("SELECT 1 FROM sessions, runs, messages LIMIT 0")  # 42P01 if one is missing
BOUNDS = "-c statement_timeout=5s -c lock_timeout=2s"  # a hung database is a quick 503


def _loaded(run: Run) -> Run:
    """The run as read from the table, its status turned back from text into a RunStatus."""
    run.status = RunStatus(run.status)
    return run


class SqlStore:
    """Sessions, runs and messages in Postgres, in the tables of one schema."""

    def __init__(self, url: str, schema: str | None = None, *, pool_size: int = 10) -> None:
        schema = schema or TREE  # where the tree's migration puts its tables: alembic -x tree=
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", schema):
            raise errors.StoreConfigError(f"DB_SCHEMA={schema!r} is not a plain Postgres name")
        if not url.startswith(("postgresql://", "postgresql+psycopg2://", "postgres://")):
            raise errors.StoreConfigError(f"DATABASE_URL must be a postgresql:// URL, not {url!r}")
        parsed = make_url(url)
        self.schema = schema
        host = parsed.host or parsed.query.get("host") or "localhost"  # ?host=/dir: a socket
        port = parsed.port or parsed.query.get("port") or 5432
        self.address = f"{host}:{port}/{parsed.database or ''}"  # for messages: no password
        # Autocommit: each statement commits itself, no BEGIN or COMMIT round trip (none here need
        # two atomic). No pool_pre_ping, another round trip: a dropped connection renews the pool.
        self._engine = create_engine(
            parsed.set(drivername="postgresql+psycopg2"),
            isolation_level="AUTOCOMMIT",
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_timeout=5,
            connect_args={"options": f"-c search_path={schema} {BOUNDS}", "connect_timeout": 3}
            | {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2},  # a vanished peer
        )
        self._warned_no_arbiter = False
        configure_mappers()  # Run() would do it on first use; create_run's model_construct does not

    def close(self) -> None:
        """Close every pooled connection."""
        self._engine.dispose()

    def ping(self) -> None:
        """Raise StoreUnavailableError unless the database answers and holds this tree's tables."""
        self._statement(ALL_TABLES, {})

    def create_session(self, user_id: str, title: str) -> ChatSession:
        """Insert a new session and return it."""
        row = ChatSession(user_id=user_id, title=title)
        with self._session() as session:
            session.add(row)
        return row

    def get_session(self, session_id: str) -> ChatSession:
        """Return the session, or raise SessionNotFoundError."""
        with self._session() as session:
            found = session.get(ChatSession, session_id)
        if found is None:
            raise errors.SessionNotFoundError(session_id)
        return found

    def create_run(self, session_id: str, input: str, idempotency_key: str) -> RunCreated:
        """Insert a pending run unless the key is taken (the unique key decides); return the run."""
        now = utc_now()
        # Every value is made here: the Run is built without validation, as a row read back is.
        run = Run.model_construct(
            id=new_id(),
            session_id=session_id,
            idempotency_key=idempotency_key,
            input=input,
            created_at=now,
            updated_at=now,
        )
        values = {f"new_{name}": getattr(run, name) for name in COLUMNS}
        try:
            if self._statement(INSERT_RUN, values, run):
                return RunCreated(run=run, created=True)
        except errors.MissingConstraintError:
            # Postgres refuses ON CONFLICT where no unique constraint covers the key (the
            # starter's schema as shipped): insert anyway, and check 3 counts the duplicates.
            if not self._warned_no_arbiter:  # once per store, not once per run
                self._warned_no_arbiter = True
                log.warning(NO_UNIQUE_KEY, self.schema)
            self._statement(INSERT_RUN_ANYWAY, values, run)
            return RunCreated(run=run, created=True)
        with self._session() as session:
            holder = session.exec(select(Run).where(Run.idempotency_key == idempotency_key)).one()
        return RunCreated(run=_loaded(holder), created=False)

    def get_run(self, run_id: str) -> Run:
        """Return the run, or raise RunNotFoundError."""
        with self._session() as session:
            found = session.get(Run, run_id)
        if found is None:
            raise errors.RunNotFoundError(run_id)
        return _loaded(found)

    def count_runs_with_key(self, idempotency_key: str) -> int:
        """Count the rows holding this idempotency key."""
        with self._session() as session:
            holding = select(func.count()).where(Run.idempotency_key == idempotency_key)
            return session.exec(holding).one()

    def transition(self, run_id: str, expected: RunStatus, target: RunStatus) -> Run:
        """Compare-and-set: the allowlist names a refusal; the conditional write settles races."""
        ensure_transition(run_id, expected, target)
        with self._session() as session:
            moved = session.exec(
                update(Run)
                .where(col(Run.id) == run_id, col(Run.status) == expected)
                .values(status=target, updated_at=utc_now())
                .returning(Run)
            ).scalar_one_or_none()
            if moved is not None:
                return _loaded(moved)
            current = session.exec(select(Run.status).where(Run.id == run_id)).one_or_none()
        if current is None:
            raise errors.RunNotFoundError(run_id)
        raise errors.TransitionConflictError(run_id, expected, current)

    def append_message(
        self, session_id: str, run_id: str | None, role: str, content: str, seq: int
    ) -> Message:
        """Insert a message at seq; the unique (run_id, seq) refuses a second one."""
        message = Message(session_id=session_id, run_id=run_id, role=role, content=content, seq=seq)
        with self._session(message) as session:
            session.add(message)
        return message

    def messages_for_run(self, run_id: str) -> list[Message]:
        """Return the run's messages ordered by seq."""
        with self._session() as session:
            ordered = select(Message).where(Message.run_id == run_id)
            return list(session.exec(ordered.order_by(col(Message.seq), col(Message.id))))

    def pending_runs(self, limit: int = 100) -> list[Run]:
        """Return up to limit pending runs, oldest first, on a read-only connection."""
        with self._session() as session:
            session.connection(execution_options={"postgresql_readonly": True})
            pending = select(Run).where(Run.status == RunStatus.PENDING)
            oldest_first = pending.order_by(col(Run.created_at), col(Run.id)).limit(limit)
            return [_loaded(run) for run in session.exec(oldest_first)]

    @contextmanager
    def _session(self, row: Message | None = None) -> Iterator[Session]:
        """An ORM session for one operation (writing row, if one is given)."""
        try:
            with Session(self._engine, expire_on_commit=False) as session, session.begin():
                yield session
        except DRIVER_ERRORS as error:
            raise self.typed_error(error, row) from None

    def _statement(
        self, statement: Executable, values: Mapping[str, object], row: Run | None = None
    ) -> str | None:
        """Run a statement safe to repeat, again if its connection dropped: its first value."""
        for retry in (False, True):
            try:
                with self._engine.connect() as connection:
                    return connection.execute(statement, values).scalar()
            except DRIVER_ERRORS as error:
                if retry or not getattr(error, "connection_invalidated", False):
                    raise self.typed_error(error, row) from None
        raise AssertionError("unreachable: the second try returns or raises")

    def typed_error(self, error: Exception, row: Run | Message | None = None) -> errors.LabError:
        """The lab's error for what SQLAlchemy or psycopg2 raised (while writing row, if any)."""
        driver = error.orig if isinstance(error, exc.DBAPIError) else error
        code = str(getattr(driver, "pgcode", None))  # the SQLSTATE, when Postgres answered
        detail = (str(driver).strip().splitlines() or [type(error).__name__])[0]
        if isinstance(error, exc.TimeoutError):  # every pooled connection is in use
            busy = "every database connection is busy: try again shortly"
            return errors.StoreUnavailableError(busy, kind="connections busy")
        if isinstance(error, ValueError) or code.startswith("22"):  # a value that does not fit
            cannot = f"the database cannot store this value: {detail}"
            return errors.InvalidRequestError("invalid_value", cannot)
        if code == "42P10":  # ON CONFLICT names columns that no unique constraint covers
            return errors.MissingConstraintError("runs.idempotency_key has no unique constraint")
        if code == "23505" and isinstance(row, Message) and row.run_id:  # unique violation
            return errors.DuplicateMessageError(row.run_id, row.seq)
        if code == "23503" and row is not None:  # foreign key violation: which key says whose
            constraint = str(getattr(getattr(driver, "diag", None), "constraint_name", ""))
            if isinstance(row, Message) and row.run_id and "run_id" in constraint:
                return errors.RunNotFoundError(row.run_id)
            return errors.SessionNotFoundError(row.session_id)
        if code in ("42P01", "3F000"):  # undefined table, undefined schema
            option = "" if self.schema == TREE else f" -x schema={self.schema}"
            alembic = f"alembic -x tree={TREE}{option}"
            reason = (
                f'the {TREE} tree has no tables in schema "{self.schema}" (DB_SCHEMA): generate '
                f'a migration with `{alembic} revision --autogenerate -m "create tables"` if there '
                f"is none yet, then run `{alembic} upgrade head`"
            )
            return errors.StoreUnavailableError(reason, kind="schema missing")
        if isinstance(driver, psycopg2.OperationalError | psycopg2.InterfaceError):
            reason = f"cannot reach the database at {self.address}: {detail}"
            kind = "database timeout" if code in ("55P03", "57014") else "database unreachable"
            return errors.StoreUnavailableError(reason, kind=kind)  # 55P03, 57014: BOUNDS ran out
        reason = f"the database refused the operation: {detail}"
        return errors.StoreUnavailableError(reason, kind="database error")
