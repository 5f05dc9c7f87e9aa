"""The gateway's hot path in plain SQL: one prepared statement, one round trip.

create_run is what every POST /chat costs, so its insert is written out
once rather than built by a query builder per call, and prepared on each
connection the first time that connection runs it: Postgres then parses and
plans it once per connection, not once per request. The schema is named in
full, because a prepared statement keeps the tables it found when prepared.
"""

from __future__ import annotations

from psycopg2.extensions import cursor as Cursor

from ..shared.schema import Run, TableModel
from ..shared.states import RunStatus

RUN_COLUMNS = tuple(TableModel.metadata.tables["runs"].c.keys())

# The name of the prepared statement, and the key under which a connection's
# info dict remembers that it prepared it.
PREPARED_INSERT = "koda_insert_run"


def prepare_insert_run(schema: str) -> str:
    """PREPARE the pending-run insert that a key already stored turns into nothing."""
    return (
        f"PREPARE {PREPARED_INSERT} (text, text, text, text, timestamptz) AS "
        f'INSERT INTO "{schema}".runs '
        "(id, session_id, status, idempotency_key, input, created_at, updated_at) "
        f"VALUES ($1, $2, '{RunStatus.PENDING.value}', $3, $4, $5, $5) "
        "ON CONFLICT (idempotency_key) DO NOTHING"
    )


def insert_unless_taken(
    cursor: Cursor, prepared: dict[str, object], schema: str, run: Run
) -> Run | None:
    """Insert the pending run; None if it went in, else the run already holding its key.

    Only the row count comes back: the caller already holds every value of
    the new row. A key already taken is rare (a retry), and its run is read by
    a second statement, which sees the holder even if another request
    committed it a moment ago (one statement would not: its snapshot is older).
    """
    if not prepared.get(PREPARED_INSERT):
        cursor.execute(prepare_insert_run(schema))
        prepared[PREPARED_INSERT] = True
    cursor.execute(
        f"EXECUTE {PREPARED_INSERT} (%s, %s, %s, %s, %s)",
        (run.id, run.session_id, run.idempotency_key, run.input, run.created_at),
    )
    if cursor.rowcount == 1:
        return None
    cursor.execute(
        f'SELECT {", ".join(RUN_COLUMNS)} FROM "{schema}".runs WHERE idempotency_key = %s',
        (run.idempotency_key,),
    )
    row = cursor.fetchone()
    assert row is not None, "a key that turned an insert into nothing is held by a stored run"
    values = dict(zip(RUN_COLUMNS, row, strict=True))
    values["status"] = RunStatus(str(values["status"]))
    return Run.model_construct(**values)  # the table's own values: nothing to validate
