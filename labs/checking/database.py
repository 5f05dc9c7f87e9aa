"""The driver's own connection to Postgres: what the tables hold, read in the tree's schema.

On Postgres a check never takes the tree's word for a row: it counts and
reads them here, over a connection the tree's code never touches. When
grading, that connection is the reader's, a role that owns nothing and may
only read the submission's three tables.

Every read is one transaction that first locks the three tables (so none
can be swapped for a view while it runs), then makes sure from the catalog
that they are still plain tables (labs/pg/plain.py: reading a view, a rule
or a policy would run the learner's code as the reader), then compares
every row with what the checks were told they made (the Ledger: each
session, run and message id an answer named), and only then reads. A host
that answers with one runId while the table holds two rows, or names a run
that is not there, fails there, whatever key it names. The search_path is
pg_catalog and pg_temp, and every name is qualified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from labs.pg.plain import PINNED, TABLES, table_problems
from labs.pg.tenants import is_tenant_schema
from labs.term.i18n import _
from labs.untrusted import clean_text

from .errors import CheckFailedError
from .rules import ROWS_NAMED

T = TypeVar("T")
# A tree that holds a lock on its own tables, or a read that runs away, ends the read.
READ_LIMITS = " -c statement_timeout=5000 -c lock_timeout=3000 -c default_transaction_read_only=on"

# The requests that make a row, and where its id is in the answer (create_run's is in "run").
MADE_BY_HTTP: dict[tuple[str, object], tuple[str, str]] = {
    ("/sessions", 201): ("sessions", "sessionId"),
    ("/chat", 202): ("runs", "runId"),
}
MADE_BY_STORE = {"create_session": "sessions", "append_message": "messages"}


@dataclass
class Ledger:
    """The ids the answers said were made, per table: what the tables should hold."""

    rows: dict[str, set[str]] = field(default_factory=lambda: {t: set() for t in TABLES})

    def note(self, call: dict[str, Any], value: Any) -> None:
        """Remember the row an answer to one request says it made, if it made one."""
        answer: dict[str, Any] = value if isinstance(value, dict) else {}
        if call.get("op") == "http" and str(call.get("method", "")).upper() == "POST":
            body = answer.get("json")
            made = MADE_BY_HTTP.get((str(call.get("path")), answer.get("status")))
            if made is not None and isinstance(body, dict):
                self.add(made[0], body.get(made[1]))
        elif call.get("op") == "store":
            method = call.get("method")
            if method == "create_run":
                run = answer.get("run")
                self.add("runs", run.get("id") if isinstance(run, dict) else None)
            elif method in MADE_BY_STORE:
                self.add(MADE_BY_STORE[str(method)], answer.get("id"))

    def add(self, table: str, row_id: object) -> None:
        """Count one row of table, by its id."""
        if table and isinstance(row_id, str):
            self.rows[table].add(row_id)


class Database:
    """The driver's own connection to Postgres: what the tables hold, in the tree's schema."""

    def __init__(self, url: str, schema: str) -> None:
        import psycopg2
        from sqlalchemy.engine import make_url

        from labs.pg.catalog import psycopg2_url

        plain_url = make_url(psycopg2_url(url)).set(drivername="postgresql")
        self.connection = psycopg2.connect(
            plain_url.render_as_string(hide_password=False),
            connect_timeout=5,
            options=PINNED + READ_LIMITS,
        )
        with self.connection.cursor() as cursor:
            cursor.execute("SET search_path = pg_catalog, pg_temp")
        self.connection.commit()
        self.schema = schema
        # A submission's schema is its own: every row in it is one the checks made.
        self.exclusive = is_tenant_schema(schema)
        self.ledger = Ledger()

    def _read(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of one query on the tables, once they are shown plain and as the answers said."""
        from psycopg2 import sql

        def read(cursor: Any) -> list[tuple[Any, ...]]:
            cursor.execute(sql.SQL(query).format(schema=sql.Identifier(self.schema)), params)
            return list(cursor.fetchall())

        return self._checked(read)

    def _checked(self, work: Callable[[Any], T]) -> T:
        """Run work in a transaction that locked, verified and audited the tables first."""
        import psycopg2
        from psycopg2 import sql

        try:
            with self.connection, self.connection.cursor() as cursor:
                cursor.execute(
                    "SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace"
                    " n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = ANY(%s)",
                    (self.schema, list(TABLES)),
                )
                present = [row[0] for row in cursor.fetchall()]
                if present:
                    names = [sql.Identifier(self.schema, name) for name in present]
                    cursor.execute(
                        sql.SQL("LOCK TABLE ONLY {} IN ACCESS SHARE MODE").format(
                            sql.SQL(", ").join(names)
                        )
                    )
                owner = self.schema if self.exclusive else None
                problems = table_problems(cursor, self.schema, owner)
                if problems:
                    raise CheckFailedError(
                        _("the lesson's plain tables, as the migration made them"),
                        _("could not grade: the schema now holds {problems}").format(
                            problems="; ".join(problems)
                        ),
                    )
                self._audit(cursor)
                return work(cursor)
        except psycopg2.errors.InsufficientPrivilege as error:
            raise CheckFailedError(
                _("to read the tables as the grader"),
                _(
                    "could not grade: {error} (the tables were replaced, or their grants taken)"
                ).format(error=first_line(error)),
            ) from None
        except psycopg2.Error as error:
            raise CheckFailedError(
                _("to read the tables as the grader"), first_line(error)
            ) from None

    def _audit(self, cursor: Any) -> None:
        """Fail unless each table holds exactly the rows the answers named (see Ledger)."""
        from psycopg2 import sql

        known = list(self.ledger.rows["sessions"])
        for table in TABLES:
            if table == "sessions" and not self.exclusive:
                continue  # in a shared schema, the checks' rows are those of their sessions
            query = sql.SQL("SELECT id FROM ONLY {}").format(sql.Identifier(self.schema, table))
            if self.exclusive:
                cursor.execute(query)
            else:
                cursor.execute(query + sql.SQL(" WHERE session_id = ANY(%s)"), (known,))
            stored = {str(row[0]) for row in cursor.fetchall()}
            named = self.ledger.rows[table]
            if stored != named:
                # Said once: the checks after this one are judged on their own rows.
                self.ledger.rows[table] = stored
                raise CheckFailedError(
                    _("{table} to hold the {count} rows the answers named").format(
                        table=table, count=len(named)
                    ),
                    _(
                        "{rows} rows: {extra} that no answer named (did one request make more "
                        "than one row?), {missing} named that are not there"
                    ).format(
                        rows=len(stored), extra=len(stored - named), missing=len(named - stored)
                    ),
                    rules=(ROWS_NAMED,),
                )

    def audit(self) -> None:
        """Fail unless the tables hold what the answers said, and are still plain tables."""
        self._checked(lambda cursor: None)

    def count(self, idempotency_key: str) -> int:
        """Rows of runs holding this key."""
        rows = self._read(
            "SELECT count(*) FROM ONLY {schema}.runs WHERE idempotency_key = %s", idempotency_key
        )
        return int(rows[0][0])

    def status(self, run_id: str) -> str:
        """The run's status column, or 'missing'."""
        rows = self._read("SELECT status FROM ONLY {schema}.runs WHERE id = %s", run_id)
        return str(rows[0][0]) if rows else "missing"

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """The status column of each of these runs that exists."""
        rows = self._read("SELECT id, status FROM ONLY {schema}.runs WHERE id = ANY(%s)", run_ids)
        return {str(run_id): str(status) for run_id, status in rows}

    def contents(self, run_id: str, seq: int) -> list[str]:
        """The contents of the run's messages at seq."""
        rows = self._read(
            "SELECT content FROM ONLY {schema}.messages WHERE run_id = %s AND seq = %s"
            " ORDER BY created_at",
            run_id,
            seq,
        )
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def first_line(error: BaseException) -> str:
    """The server's first line about an error, cleaned for display."""
    text = str(error).strip()
    return clean_text(text.splitlines()[0] if text else type(error).__name__, 300)
