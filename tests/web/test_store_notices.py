"""What the runs view says when the store cannot serve: worded by cause, with the fix."""

from __future__ import annotations

import pytest
from flask import Flask

from solution.infra.sql import SqlStore

CANNOT_REACH = "cannot reach the database at 127.0.0.1:5432/koda: connection refused"


class UndefinedTableError(Exception):
    """What psycopg2 raises for a table the schema lacks: SQLSTATE 42P01."""

    pgcode = "42P01"


def missing_tables(schema: str) -> str:
    """The sentence the solution's SqlStore says when its tables are not in schema."""
    store = SqlStore("postgresql://koda@127.0.0.1:9/koda", schema=schema)  # never connects
    return str(store.typed_error(UndefinedTableError()))


@pytest.mark.parametrize("schema", ["solution", "public"])
def test_missing_tables_ask_for_the_alembic_command_the_store_names(
    app: Flask, schema: str
) -> None:
    """Tables missing: run the store's upgrade command, then reload; nothing about starting."""
    bench = app.extensions["mini_koda_lab"].bench("solution")
    said = str(bench.down(bench.unavailable(missing_tables(schema))))
    upgrade = "alembic -x tree=solution" + ("" if schema == "solution" else f" -x schema={schema}")
    assert said.endswith(f"run `{upgrade} upgrade head`, then reload")
    assert "start the database" not in said


@pytest.mark.parametrize("reason", [CANNOT_REACH, "POST /sessions answered 503: " + CANNOT_REACH])
def test_an_unreachable_database_asks_to_start_it(app: Flask, reason: str) -> None:
    """Database unreachable: start it again and reload; no alembic command is suggested."""
    bench = app.extensions["mini_koda_lab"].bench("solution")
    said = str(bench.down(bench.unavailable(reason)))
    assert "did not answer" in said and said.endswith("start the database again and reload")
    assert "alembic" not in said.replace(reason, "")


def test_another_outage_asks_only_to_try_again(app: Flask) -> None:
    """A busy pool is neither cause: the notice asks to reload, not to start or migrate."""
    bench = app.extensions["mini_koda_lab"].bench("solution")
    said = str(
        bench.down(bench.unavailable("every database connection is busy: try again shortly"))
    )
    assert said.endswith("reload to try again")
    assert "start the database" not in said and "alembic" not in said
