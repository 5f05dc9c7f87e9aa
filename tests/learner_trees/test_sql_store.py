"""What only the Postgres store does: schemas, missing tables, a missing key, bad URLs."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import psycopg2
import pytest

from solution.infra import make_store
from solution.infra.sql import SqlStore
from solution.shared.errors import InvalidRequestError, StoreConfigError, StoreUnavailableError
from starter.infra.sql import SqlStore as StarterSqlStore
from tests.support.migrations import migrate, unfixed_starter_migration


def sql_store(environ: dict[str, str]) -> SqlStore:
    """make_store's answer without MOCK=1: the SqlStore, which the caller closes."""
    store = make_store(environ)
    assert isinstance(store, SqlStore), store
    return store


def test_before_any_migration_ping_names_the_tree_and_the_command(fresh_database: str) -> None:
    """One sentence says whose tables are missing and the exact command that creates them."""
    store = SqlStore(fresh_database, schema="solution")
    with pytest.raises(StoreUnavailableError) as missing:
        store.ping()
    store.close()
    reason = missing.value.reason
    assert "solution" in reason and "`alembic -x tree=solution upgrade head`" in reason
    assert reason.count(". ") == 0 and "\n" not in reason


def test_every_operation_on_a_missing_schema_gives_the_same_sentence(fresh_database: str) -> None:
    """A write before the migration is a typed StoreUnavailableError, not a driver error."""
    store = SqlStore(fresh_database, schema="solution")
    with pytest.raises(StoreUnavailableError, match=r"alembic -x tree=solution upgrade head"):
        store.create_session("ada", "t")
    store.close()


def test_tables_missing_from_db_schema_name_it_and_both_alembic_steps(fresh_database: str) -> None:
    """Another schema than the tree's: the sentence names it, DB_SCHEMA, and -x schema= for it."""
    migrate(fresh_database)  # the solution's tables, in schema solution
    store = sql_store({"DATABASE_URL": fresh_database, "DB_SCHEMA": "public"})
    with pytest.raises(StoreUnavailableError) as missing:
        store.ping()
    store.close()
    reason = missing.value.reason
    assert 'schema "public" (DB_SCHEMA)' in reason
    assert '`alembic -x tree=solution -x schema=public revision --autogenerate -m "' in reason
    assert reason.endswith("then run `alembic -x tree=solution -x schema=public upgrade head`")


def test_a_read_held_up_by_a_lock_gives_up_as_unavailable(fresh_database: str) -> None:
    """A lock held elsewhere makes a read fail as "database timeout", not wait without end."""
    migrate(fresh_database)
    store = SqlStore(fresh_database, schema="solution", pool_size=1)
    holder = psycopg2.connect(fresh_database)
    holder.cursor().execute("LOCK TABLE solution.sessions IN ACCESS EXCLUSIVE MODE")
    release = threading.Timer(20, holder.rollback)  # so that a store without the bound ends too
    release.start()
    try:
        with pytest.raises(StoreUnavailableError) as timed_out:
            store.get_session("anything")
    finally:
        release.cancel()
        holder.close()
        store.close()
    assert timed_out.value.kind == "database timeout"
    assert "lock timeout" in timed_out.value.reason


def test_an_unreachable_database_is_unavailable_with_its_address() -> None:
    """A refused connection becomes StoreUnavailableError naming where it tried."""
    store = SqlStore("postgresql://koda@127.0.0.1:9/koda", schema="solution")
    with pytest.raises(StoreUnavailableError, match=r"cannot reach the database at 127\.0\.0\.1:9"):
        store.get_session("anything")
    store.close()


@pytest.mark.parametrize("url", ["not a url", "mysql://koda@localhost/koda"])
def test_a_url_that_is_not_postgres_is_a_config_error(url: str) -> None:
    """make_store with a wrong DATABASE_URL says what is wrong with it."""
    with pytest.raises(StoreConfigError, match=r"DATABASE_URL"):
        make_store({"DATABASE_URL": url})


@pytest.mark.parametrize(
    ("environ", "schema"),
    [({}, "solution"), ({"DB_SCHEMA": ""}, "solution"), ({"DB_SCHEMA": "mine"}, "mine")],
)
def test_make_store_gives_the_sql_store_in_db_schema(environ: dict[str, str], schema: str) -> None:
    """Without MOCK, DATABASE_URL gives a SqlStore on DB_SCHEMA; unset, the tree's own schema,
    the one its migration fills."""
    store = make_store({"DATABASE_URL": "postgresql://koda@127.0.0.1:9/koda", **environ})
    assert isinstance(store, SqlStore) and store.schema == schema
    store.close()


def test_without_db_schema_the_store_finds_what_alembic_made(solution_database: str) -> None:
    """The tree and Alembic agree without DB_SCHEMA: `alembic -x tree=solution upgrade head`
    puts the tables where make_store looks when nothing is set."""
    store = sql_store({"DATABASE_URL": solution_database})
    try:
        store.ping()
        session = store.create_session("u-1", "agree")
        assert store.get_session(session.id).title == "agree"
    finally:
        store.close()


def test_make_store_in_the_schema_alembic_filled_serves(solution_database: str) -> None:
    """DB_SCHEMA=solution: the tables `alembic -x tree=solution upgrade head` made are found."""
    store = sql_store({"DATABASE_URL": solution_database, "DB_SCHEMA": "solution"})
    store.ping()
    store.close()


def test_the_two_trees_never_see_each_others_rows(fresh_database: str, tmp_path: Path) -> None:
    """A session written through the solution's schema does not exist in the starter's."""
    migrate(fresh_database)
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database, "starter", tmp_path)
    solution = SqlStore(fresh_database, "solution")
    starter = StarterSqlStore(fresh_database, "starter")
    session = solution.create_session("ada", "only in solution")
    with pytest.raises(Exception, match=r"does not exist"):
        starter.get_session(session.id)
    solution.close()
    starter.close()


def test_without_the_unique_key_a_retry_becomes_a_second_run(
    fresh_database: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """On the starter's unfixed schema a retry inserts again, and the log names TODO(check 3)."""
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database, "starter", tmp_path)
    store = StarterSqlStore(fresh_database, "starter")
    session = store.create_session("ada", "t")
    with caplog.at_level(logging.WARNING):
        first = store.create_run(session.id, "hi", "same-key")
        second = store.create_run(session.id, "hi", "same-key")
    store.close()
    assert first.run.id != second.run.id and store.count_runs_with_key("same-key") == 2
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "runs.idempotency_key" in warnings[0] and "TODO(check 3)" in warnings[0]


@pytest.mark.parametrize(
    ("content", "seq"), [("nul \x00 inside", 0), ("fine", 2**40)], ids=["nul", "seq-out-of-range"]
)
def test_a_value_postgres_cannot_hold_is_an_invalid_value_error(
    solution_database: str, content: str, seq: int
) -> None:
    """NUL in text and an integer past 32 bits are typed errors, not driver exceptions or 503s."""
    store = SqlStore(solution_database, schema="solution")
    session = store.create_session("ada", "values")
    run = store.create_run(session.id, "hi", f"values-{seq}").run
    with pytest.raises(InvalidRequestError, match=r"cannot store this value") as refused:
        store.append_message(session.id, run.id, "user", content, seq)
    assert refused.value.code == "invalid_value"
    assert store.messages_for_run(run.id) == []
    store.close()


@pytest.mark.parametrize("run_id", ["%00", "a%00b"])
def test_the_gateway_over_postgres_answers_a_nul_run_id_with_400(
    solution_database: str, run_id: str
) -> None:
    """The URL's run id is checked before the query, so Postgres never sees the NUL."""
    from solution.gateway import create_app

    store = SqlStore(solution_database, schema="solution")
    answer = create_app(store).test_client().get(f"/runs/{run_id}")
    store.close()
    assert answer.status_code == 400 and answer.get_json()["field"] == "runId"
