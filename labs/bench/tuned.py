"""Part (c-tuned): the hand-tuned accept path the trees used to carry, kept as a yardstick.

Before the trees were written plainly, POST /chat cost one prepared statement
on a raw psycopg2 cursor (PREPARE ... ON CONFLICT DO NOTHING, once per
connection, then EXECUTE), in autocommit, on a pool that polls each pooled
socket at checkout instead of pinging the server, and an answer built by hand
rather than by jsonify. The trees' SqlStore and route now say the same thing
the library's way; the bench measures both, side by side, to show what the
plain form costs. Served as `gunicorn 'labs.bench.tuned:create_app()'` with
BENCH_TREE, DATABASE_URL and DB_SCHEMA set: the tree's own gateway, whose
POST /chat view is replaced by the one below.
"""

from __future__ import annotations

import importlib
import json
import os
import select
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg2
from flask import Flask, Response, request
from psycopg2 import sql
from sqlalchemy import create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError

PREPARED = "koda_insert_run"  # the statement's name, and its key in a connection's info dict
PREPARE = sql.SQL(
    "PREPARE {name} (text, text, text, text, timestamptz) AS "
    "INSERT INTO {schema}.runs (id, session_id, status, idempotency_key, input, created_at, "
    "updated_at) VALUES ($1, $2, 'pending', $3, $4, $5, $5) "
    "ON CONFLICT (idempotency_key) DO NOTHING"
)
EXECUTE = sql.SQL("EXECUTE {name} (%s, %s, %s, %s, %s)").format(name=sql.Identifier(PREPARED))
HOLDER = sql.SQL("SELECT id, input FROM {schema}.runs WHERE idempotency_key = %s")


def refuse_dead_connection(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    """On checkout: a pooled socket with something to read is one the server has closed."""
    if dbapi_connection.closed:
        raise DisconnectionError("the connection is closed")
    probe = select.poll()
    probe.register(dbapi_connection.fileno(), select.POLLIN)
    if probe.poll(0):
        raise DisconnectionError("the server closed the connection while it was pooled")


class TunedIntake:
    """The prepared insert, on raw pooled connections in autocommit; one retry if one died."""

    def __init__(
        self, url: str, schema: str, errors: Any, clock: Callable[[], datetime], pool_size: int = 10
    ) -> None:
        self.errors, self.clock = errors, clock
        self.prepare = PREPARE.format(name=sql.Identifier(PREPARED), schema=sql.Identifier(schema))
        self.holder = HOLDER.format(schema=sql.Identifier(schema))
        self.engine = create_engine(
            make_url(url).set(drivername="postgresql+psycopg2"),
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_timeout=5,
            connect_args={"options": f"-c search_path={schema}", "connect_timeout": 3},
        )
        event.listen(self.engine, "checkout", refuse_dead_connection)

    def create_run(self, run_id: str, session_id: str, text: str, key: str) -> tuple[str, str]:
        """Insert the pending run unless the key is held; return (run id, input) of the holder."""
        for attempt in (1, 2):
            try:
                pooled = self.engine.raw_connection()
            except (SQLAlchemyError, psycopg2.Error) as error:
                unreachable = self.errors.StoreUnavailableError(str(error), "database unreachable")
                raise unreachable from None
            driver: Any = pooled.dbapi_connection  # psycopg2's own connection
            try:
                driver.autocommit = True
                with driver.cursor() as cursor:
                    return self._insert(cursor, pooled.info, run_id, session_id, text, key)
            except psycopg2.Error as error:
                if error.pgcode == "23503":
                    raise self.errors.SessionNotFoundError(session_id) from None
                if not driver.closed or attempt == 2:
                    raise self.errors.StoreUnavailableError(str(error), "database error") from None
                pooled.invalidate(error)
            finally:
                if not driver.closed:
                    driver.autocommit = False
                pooled.close()
        raise AssertionError("unreachable")

    def _insert(
        self, cursor: Any, info: dict[str, Any], run_id: str, session_id: str, text: str, key: str
    ) -> tuple[str, str]:
        """PREPARE once per connection, then EXECUTE; read the holder when nothing went in."""
        if not info.get(PREPARED):
            cursor.execute(self.prepare)
            info[PREPARED] = True
        cursor.execute(EXECUTE, (run_id, session_id, key, text, self.clock()))
        if cursor.rowcount == 1:
            return run_id, text
        cursor.execute(self.holder, (key,))
        found = cursor.fetchone()
        return str(found[0]), str(found[1])


def create_app() -> Flask:
    """The tree's gateway (BENCH_TREE), its POST /chat view replaced by the hand-tuned one."""
    tree = os.environ.get("BENCH_TREE", "solution")
    module = importlib.import_module
    errors, keys = module(f"{tree}.shared.errors"), module(f"{tree}.shared.keys")
    schema_module, fields = module(f"{tree}.shared.schema"), module(f"{tree}.gateway.requests")
    schema = os.environ.get("DB_SCHEMA") or "public"
    intake = TunedIntake(os.environ["DATABASE_URL"], schema, errors, schema_module.utc_now)
    app: Flask = module(f"{tree}.gateway").create_app()
    limit = fields.MAX_BODY_BYTES

    def chat() -> Response:
        """POST /chat: validate as the tree does, insert by the prepared statement, answer."""
        body = fields.json_object(request)
        session_id = fields.required_text(body, "sessionId")
        message = fields.required_text(body, "message", max_chars=limit)
        client_message_id = fields.optional_text(body, "clientMessageId")
        key = keys.idempotency_key_for(session_id, client_message_id, message)
        new_id = schema_module.new_id()
        run_id, held = intake.create_run(new_id, session_id, message, key)
        # The Run the old store handed back, assembled without validation from the values made.
        now = schema_module.utc_now()
        run = schema_module.Run.model_construct(
            id=run_id,
            session_id=session_id,
            status="pending",
            idempotency_key=key,
            input=held,
            error=None,
            prompt_tokens=0,
            completion_tokens=0,
            created_at=now,
            updated_at=now,
        )
        if run_id != new_id and run.input != message:
            raise errors.IdempotencyConflictError(client_message_id or key, run.id)
        # Built directly, not by jsonify: the body by json.dumps, the headers in one list.
        answer = json.dumps({"runId": run.id, "status": run.status})
        headers = [
            ("Location", f"{request.script_root}/runs/{run.id}"),
            ("Idempotent-Replayed", "false" if run_id == new_id else "true"),
        ]
        return Response(answer, 202, headers, mimetype="application/json")

    app.view_functions["gateway.chat"] = chat
    return app
