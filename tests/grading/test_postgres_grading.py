"""Grading on Postgres: each submission's own migration builds the tables its checks run on."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import psycopg2
import pytest

from labs.grading.on_postgres import as_role
from labs.grading.on_postgres_roles import (
    connect_admin,
    create_roles,
    drop_roles,
    end_migration,
)
from labs.pg.cluster import TempCluster
from labs.pg.tenants import Names, new_names
from labs.sandbox.box import Sandbox
from tests.grading import submissions as make
from tests.grading.mistakes.catalogue import CATALOGUE, build
from tests.grading.postgres_help import (
    grading_leftovers,
    outcomes,
    postgres_outcomes,
    with_real_migration,
)


def test_a_fixed_tree_with_its_migration_passes_the_six_on_postgres(
    tmp_path: Path, reachable_database: str
) -> None:
    """The solved regions plus a migration carrying both constraints earn every Postgres check."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    with_real_migration(tree, constraints=True)
    outcomes = postgres_outcomes(tree, reachable_database)
    assert {n: o.status for n, o in outcomes.items()} == dict.fromkeys(range(1, 7), "pass")
    assert grading_leftovers(reachable_database) == []


def test_the_untouched_starter_on_its_own_migration_fails_3_4_5_on_postgres(
    tmp_path: Path, reachable_database: str
) -> None:
    """Without the constraints Postgres lets the duplicates in, as the checks report."""
    tree = make.starter_copy(tmp_path / "ben")
    with_real_migration(tree, constraints=False)
    outcomes = postgres_outcomes(tree, reachable_database)
    assert [n for n, o in outcomes.items() if o.status == "pass"] == [1, 2, 6]
    assert grading_leftovers(reachable_database) == []


@pytest.mark.parametrize("broken", ["missing", "failing"])
def test_without_a_migration_that_applies_every_postgres_check_fails_saying_why(
    tmp_path: Path, reachable_database: str, broken: str
) -> None:
    """No migration, or one that cannot run, is a failed grade with the reason, not a crash."""
    tree = make.fixed(tmp_path / "cho") / "starter"
    if broken == "failing":
        versions = tree.parent / "migrations" / "versions" / tree.name
        versions.mkdir(parents=True)
        (versions / "0001_bad.py").write_text(
            'revision = "0001"\ndown_revision = None\n\n\n'
            "def upgrade() -> None:\n    raise RuntimeError('half-written migration')\n",
            encoding="utf-8",
        )
    outcomes = postgres_outcomes(tree, reachable_database)
    assert {o.status for o in outcomes.values()} == {"fail"}
    expected = "no migration" if broken == "missing" else "half-written migration"
    assert all(expected in o.message for o in outcomes.values())
    assert grading_leftovers(reachable_database) == []


def refused(url: str, statement: str) -> bool:
    """Whether Postgres refuses the statement for the role url logs in as."""
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement)
        connection.commit()
    except psycopg2.errors.InsufficientPrivilege:
        return True
    finally:
        connection.close()
    return False


def tenant_of(database_url: str, names: Names) -> str:
    """Make a submission's roles and schema as grading does; the URL its role logs in with."""
    admin = connect_admin(database_url, names.marker)
    with admin.cursor() as cursor:
        password, _reader = create_roles(cursor, names)
    admin.close()
    return as_role(database_url, names.tenant, password)


def drop(database_url: str, names: Names) -> None:
    """Drop a submission's roles and schema as grading does."""
    admin = connect_admin(database_url)
    with admin.cursor() as cursor:
        assert drop_roles(cursor, names) == []
    admin.close()


def test_a_submissions_role_reaches_only_its_own_schema(reachable_database: str) -> None:
    """Its own schema is its to use; the solution's, another submission's and public's are not."""
    with psycopg2.connect(reachable_database) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA solution; CREATE TABLE solution.runs (id int)")
        cursor.execute("CREATE TABLE public.grades (score int)")
    connection.close()
    ada, ben = new_names(), new_names()
    mine, theirs = tenant_of(reachable_database, ada), tenant_of(reachable_database, ben)
    try:
        assert not refused(mine, "CREATE TABLE runs (id int); INSERT INTO runs VALUES (1)")
        assert not refused(theirs, "CREATE TABLE runs (id int)")
        assert refused(mine, "SELECT * FROM solution.runs")
        assert refused(mine, f'SELECT * FROM "{ben.tenant}".runs')
        assert refused(mine, f'CREATE TABLE "{ben.tenant}".planted (id int)')
        assert refused(mine, "SELECT * FROM public.grades")
        assert refused(mine, "CREATE ROLE sidekick")
        assert refused(mine, f'ALTER ROLE "{ada.tenant}" CONNECTION LIMIT -1')
    finally:
        for names in (ada, ben):
            drop(reachable_database, names)
    assert grading_leftovers(reachable_database) == []


def test_grading_on_postgres_leaves_no_role_behind(tmp_path: Path, reachable_database: str) -> None:
    """The roles a submission was graded as are dropped with its schema."""
    tree = make.starter_copy(tmp_path / "ben")
    with_real_migration(tree, constraints=False)
    postgres_outcomes(tree, reachable_database)
    assert grading_leftovers(reachable_database) == []


def test_a_socket_url_stays_a_socket_and_a_netless_sandbox_logs_in_through_it(
    pg_cluster: TempCluster, reachable_database: str
) -> None:
    """The grader keeps the URL's transport: a socket URL's role logs in over it, from a sandbox."""
    names = new_names()
    url = tenant_of(reachable_database, names)
    try:
        assert f"host={pg_cluster.socket_dir}" in url
        code = "import os, psycopg2; c = psycopg2.connect(os.environ['URL']); "
        code += "k = c.cursor(); k.execute('SELECT current_user'); print(k.fetchone()[0])"
        with Sandbox() as box:
            done = box.run([sys.executable, "-c", code], timeout=60, env={"URL": url})
        assert done.stdout.strip() == names.tenant, done.stderr
    finally:
        drop(reachable_database, names)


def test_runs_sharing_a_server_make_and_drop_their_roles_at_once(reachable_database: str) -> None:
    """Eight runs at once, twenty each: no grant or revoke on the database collides with another.

    Each such statement rewrites the database's one row in pg_database; two
    at once failed with "tuple concurrently updated", and the run was refused.
    """
    failures: list[str] = []

    def runs_one_after_another() -> None:
        for _ in range(20):
            names = new_names()
            admin = connect_admin(reachable_database, names.marker)
            try:
                with admin.cursor() as cursor:
                    create_roles(cursor, names)
                    end_migration(cursor, names)
                    failures.extend(drop_roles(cursor, names))
            except Exception as error:  # the failure this test is for, kept for the assertion
                failures.append(repr(error))
            finally:
                admin.close()

    threads = [threading.Thread(target=runs_one_after_another) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    assert failures == []
    assert grading_leftovers(reachable_database) == []


def line_of(script: Path, text: str) -> int:
    """The number of the first line of script holding text."""
    lines = script.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def hint_of(message: str) -> str:
    """The hint line of a check's message."""
    (hint,) = [line for line in message.splitlines() if line.startswith("hint:")]
    return hint


# Catalogue answers whose regions are right and whose migration is not: the text naming the
# flaw in the script (a quoted table: its create_table above), its own check and its words.
FROM_THE_MIGRATION = {
    "migration-with-a-deferrable-runs-key": (
        "runs_idempotency_key_key",
        3,
        "the migration makes runs_idempotency_key_key DEFERRABLE, and INSERT ... ON CONFLICT "
        "cannot use a deferrable constraint (SQLSTATE 55000)",
    ),
    "migration-with-a-unique-index-on-an-expression": (
        "runs_key_lower",
        3,
        "the migration makes runs_key_lower unique on an expression, (lower(idempotency_key)): "
        "INSERT ... ON CONFLICT (idempotency_key) finds no unique index or constraint it can use "
        "(SQLSTATE 42P10)",
    ),
    "partial-unique-index-on-runs": (
        "runs_key_live",
        3,
        "the migration makes runs_key_live a partial",
    ),
    "migration-without-the-messages-key": (
        '"messages",',
        5,
        "the migration makes no unique (run_id, seq) on messages, which shared/schema.py declares",
    ),
}
FOLLOWS = (
    "follows from the migration's deferrable constraint runs_idempotency_key_key: INSERT ... ON "
    "CONFLICT cannot use it (SQLSTATE 55000), so Postgres refused every new run"
)


@pytest.mark.parametrize("name", list(FROM_THE_MIGRATION))
def test_a_failure_that_follows_from_the_migration_points_at_it_not_at_a_region(
    tmp_path: Path, reachable_database: str, name: str
) -> None:
    """Every failed check hints at the migration's line that made it fail: the check the
    uniqueness serves says what Postgres refused and why, the others that it follows from it."""
    (answer,) = [a for a in CATALOGUE if a.name == name]
    named, own, told = FROM_THE_MIGRATION[name]
    tree = build(answer, tmp_path / "ada")
    script = next((tree.parent / "migrations" / "versions" / "starter").glob("*.py"))
    line = line_of(script, named) - (1 if named.startswith('"') else 0)  # create_table( above
    where = f"hint:     migrations/versions/starter/{script.name}:{line}  "
    outcomes = postgres_outcomes(tree, reachable_database)
    failed = {n: o.message for n, o in outcomes.items() if not o.passed}
    assert set(failed) == set(answer.postgres_fails) and own in failed, failed
    for number, message in failed.items():
        hint = hint_of(message)
        assert hint.startswith(where + (told if number == own else FOLLOWS)), message


def test_a_migration_lacking_a_uniqueness_is_blamed_only_where_schema_py_declares_it(
    tmp_path: Path, reachable_database: str
) -> None:
    """The same migration without constraints: under a schema.py that declares them, checks 3
    and 5 hint at the migration's create_table; under the starter's TODOs, at the tree's files."""
    declared = make.fixed(tmp_path / "ada") / "starter"
    todo = make.starter_copy(tmp_path / "ben")
    for tree in (declared, todo):
        with_real_migration(tree, constraints=False)
    script = next((declared.parent / "migrations" / "versions" / "starter").glob("*.py"))
    migration = f"hint:     migrations/versions/starter/{script.name}:"
    hints = {
        tree: {
            n: hint_of(o.message)
            for n, o in postgres_outcomes(tree, reachable_database).items()
            if n in (3, 5)
        }
        for tree in (declared, todo)
    }
    for number, table in ((3, '"runs",'), (5, '"messages",')):
        assert hints[declared][number].startswith(
            f"{migration}{line_of(script, table) - 1}  the migration makes no unique"
        ), hints[declared]
        assert hints[todo][number].startswith("hint:     starter/shared/"), hints[todo]
    assert grading_leftovers(reachable_database) == []


# The advisory lock key grading runs once took around their GRANTs ("lab_acl"): a migration that
# held it made every classmate graded at the same time wait, then fail.
ONCE_THE_GRANTS_LOCK = int.from_bytes(b"lab_acl", "big")
HOG_SECONDS = 40


def advisory_locks_held(database_url: str) -> int:
    """How many advisory locks sessions of the server hold right now."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
        row = cursor.fetchone()
        assert row is not None
        (count,) = row
    connection.close()
    return int(count)


def end_advisory_lock_holders(database_url: str) -> None:
    """End every other session of the server that holds an advisory lock."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks"
            " WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"
        )
    connection.close()


def test_a_migration_that_holds_advisory_locks_holds_up_no_classmate(
    tmp_path: Path, reachable_database: str
) -> None:
    """Issue 22: a migration takes the lock grading once needed for its GRANTs (and others),
    switches its own timeouts off and sleeps; an honest classmate graded meanwhile on the same
    server still earns all six, without waiting for it."""
    hog = make.fixed(tmp_path / "hog") / "starter"
    keys = ", ".join(f"pg_advisory_lock({key})" for key in (ONCE_THE_GRANTS_LOCK, 1, 2))
    with_real_migration(
        hog,
        then=(
            'op.execute("SET statement_timeout = 0")\n'
            'op.execute("SET lock_timeout = 0")\n'
            f'op.execute("SELECT {keys}")\n'
            f'op.execute("SELECT pg_sleep({HOG_SECONDS})")'
        ),
    )
    honest = make.fixed(tmp_path / "ada") / "starter"
    with_real_migration(honest, constraints=True)
    hogging = threading.Thread(
        target=postgres_outcomes, args=(hog, reachable_database), daemon=True
    )
    hogging.start()
    for _ in range(600):  # until its migration holds the locks
        if advisory_locks_held(reachable_database) >= 3:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the hog's migration never took its locks")
    started = time.monotonic()
    outcomes = postgres_outcomes(honest, reachable_database)
    waited = time.monotonic() - started
    assert {n: o.status for n, o in outcomes.items()} == dict.fromkeys(range(1, 7), "pass"), {
        n: o.message for n, o in outcomes.items()
    }
    assert advisory_locks_held(reachable_database) >= 3, (
        "graded after the hog let go: proves nothing"
    )
    assert waited < HOG_SECONDS
    # Not waited for: the hog's session is ended, its migration fails, and its grading still
    # leaves nothing behind.
    end_advisory_lock_holders(reachable_database)
    hogging.join(timeout=HOG_SECONDS * 3)
    assert not hogging.is_alive()
    assert grading_leftovers(reachable_database) == []


def test_a_database_error_after_the_migration_fails_only_what_needs_its_tables(
    tmp_path: Path, reachable_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: once the learner's migration ran, Postgres refusing the grader (here when it
    grants the reader its tables) fails the Postgres checks and the migration, saying so; the
    memory checks keep their points, and nothing is left on the server."""

    def refused(cursor: object, names: Names) -> None:
        raise psycopg2.errors.InsufficientPrivilege("permission denied for schema lab_grade_x")

    monkeypatch.setattr("labs.grading.on_postgres.grant_reader", refused)
    tree = make.fixed(tmp_path / "ada") / "starter"
    with_real_migration(tree, constraints=True)
    found = outcomes(tree, reachable_database, ("memory", "postgres", "migration"))
    memory = {k: o.status for k, o in found.items() if k.startswith("memory-")}
    assert memory == {f"memory-{n}": "pass" for n in range(1, 7)}
    for key in [f"postgres-{n}" for n in range(1, 7)] + ["migration"]:
        assert found[key].status == "fail", (key, found[key])
        assert "after the migration ran, Postgres refused the grader" in found[key].message
        assert "permission denied for schema" in found[key].message
    assert grading_leftovers(reachable_database) == []
