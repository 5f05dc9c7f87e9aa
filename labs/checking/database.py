"""The driver's own connection to Postgres: what the tables hold, read in the tree's schema.

On Postgres a check never takes the tree's word for a row: it counts and
reads them here, over a connection the tree's code never touches.
"""

from __future__ import annotations

from typing import Any


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

    def _rows(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        from psycopg2 import sql

        with self.connection.cursor() as cursor:
            cursor.execute(sql.SQL(query).format(schema=sql.Identifier(self.schema)), params)
            return list(cursor.fetchall())

    def count(self, idempotency_key: str) -> int:
        """Rows of runs holding this key."""
        rows = self._rows(
            "SELECT count(*) FROM {schema}.runs WHERE idempotency_key = %s", idempotency_key
        )
        return int(rows[0][0])

    def status(self, run_id: str) -> str:
        """The run's status column, or 'missing'."""
        rows = self._rows("SELECT status FROM {schema}.runs WHERE id = %s", run_id)
        return str(rows[0][0]) if rows else "missing"

    def statuses(self, run_ids: list[str]) -> dict[str, str]:
        """The status column of each of these runs that exists."""
        rows = self._rows("SELECT id, status FROM {schema}.runs WHERE id = ANY(%s)", run_ids)
        return {str(run_id): str(status) for run_id, status in rows}

    def contents(self, run_id: str, seq: int) -> list[str]:
        """The contents of the run's messages at seq."""
        rows = self._rows(
            "SELECT content FROM {schema}.messages WHERE run_id = %s AND seq = %s"
            " ORDER BY created_at",
            run_id,
            seq,
        )
        return [str(row[0]) for row in rows]

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()
