"""Grading on Postgres: each submission's own migration builds the tables its checks run on."""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg2
import pytest

from labs.grading.criteria import Outcome
from labs.grading.grader import Grader
from labs.grading.on_postgres import (
    Tenant,
    as_role,
    create_tenant,
    drop_tenant,
    grading_schema,
    over_socket,
)
from labs.pg.cluster import TempCluster
from labs.sandbox.box import run_sandboxed
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make

REFERENCE = next((REPO_ROOT / "migrations" / "versions" / "solution").glob("0001_*.py"))


def with_real_migration(tree: Path, *, constraints: bool) -> None:
    """Put a full migration beside the tree: the reference one, or it without the constraints."""
    lines = REFERENCE.read_text(encoding="utf-8").splitlines(keepends=True)
    if not constraints:
        lines = [line for line in lines if "sa.UniqueConstraint(" not in line]
    versions = tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True)
    (versions / "0001_learner.py").write_text("".join(lines), encoding="utf-8")


def postgres_outcomes(tree: Path, database_url: str) -> dict[int, Outcome]:
    """The six Postgres check outcomes of one submission."""
    grade = Grader(tree, timeout=20.0, database_url=database_url).grade()
    return {n: grade.outcomes[f"postgres-{n}"] for n in range(1, 7)}


def grading_schemas(database_url: str) -> list[str]:
    """Schemas a grading run made and did not drop."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'grade_%'")
        return [row[0] for row in cursor.fetchall()]


def test_a_fixed_tree_with_its_migration_passes_the_six_on_postgres(
    tmp_path: Path, fresh_database: str
) -> None:
    """The solved regions plus a migration carrying both constraints earn every Postgres check."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    with_real_migration(tree, constraints=True)
    outcomes = postgres_outcomes(tree, fresh_database)
    assert {n: o.status for n, o in outcomes.items()} == dict.fromkeys(range(1, 7), "pass")
    assert grading_schemas(fresh_database) == []


def test_the_untouched_starter_on_its_own_migration_fails_3_4_5_on_postgres(
    tmp_path: Path, fresh_database: str
) -> None:
    """Without the constraints Postgres lets the duplicates in, as the checks report."""
    tree = make.starter_copy(tmp_path / "ben")
    with_real_migration(tree, constraints=False)
    outcomes = postgres_outcomes(tree, fresh_database)
    assert [n for n, o in outcomes.items() if o.status == "pass"] == [1, 2, 6]
    assert grading_schemas(fresh_database) == []


@pytest.mark.parametrize("broken", ["missing", "failing"])
def test_without_a_migration_that_applies_every_postgres_check_fails_saying_why(
    tmp_path: Path, fresh_database: str, broken: str
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
    outcomes = postgres_outcomes(tree, fresh_database)
    assert {o.status for o in outcomes.values()} == {"fail"}
    expected = "no migration" if broken == "missing" else "half-written migration"
    assert all(expected in o.message for o in outcomes.values())
    assert grading_schemas(fresh_database) == []


def grading_roles(database_url: str) -> list[str]:
    """Roles a grading run made and did not drop."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'grade_%'")
        return [row[0] for row in cursor.fetchall()]


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


def test_a_submissions_role_reaches_only_its_own_schema(fresh_database: str) -> None:
    """Its own schema is its to use; the solution's, another submission's and public's are not."""
    with psycopg2.connect(fresh_database) as connection, connection.cursor() as cursor:
        cursor.execute("CREATE SCHEMA solution; CREATE TABLE solution.runs (id int)")
        cursor.execute("CREATE TABLE public.grades (score int)")
    mine, theirs = (
        Tenant(name, as_role(fresh_database, name, "pw"))
        for name in (grading_schema(Path("ada")), grading_schema(Path("ben")))
    )
    for tenant in (mine, theirs):
        create_tenant(fresh_database, tenant)
    try:
        assert not refused(mine.url, "CREATE TABLE runs (id int); INSERT INTO runs VALUES (1)")
        assert not refused(theirs.url, "CREATE TABLE runs (id int)")
        assert refused(mine.url, "SELECT * FROM solution.runs")
        assert refused(mine.url, f'SELECT * FROM "{theirs.schema}".runs')
        assert refused(mine.url, f'CREATE TABLE "{theirs.schema}".planted (id int)')
        assert refused(mine.url, "SELECT * FROM public.grades")
        assert refused(mine.url, "CREATE ROLE sidekick")
    finally:
        for tenant in (mine, theirs):
            drop_tenant(fresh_database, tenant.schema)
    assert grading_roles(fresh_database) == []
    assert grading_schemas(fresh_database) == []


def test_grading_on_postgres_leaves_no_role_behind(tmp_path: Path, fresh_database: str) -> None:
    """The role a submission was graded as is dropped with its schema."""
    tree = make.starter_copy(tmp_path / "ben")
    with_real_migration(tree, constraints=False)
    postgres_outcomes(tree, fresh_database)
    assert grading_roles(fresh_database) == []


def test_a_sandbox_without_network_reaches_its_schema_over_the_socket(
    pg_cluster: TempCluster, fresh_database: str
) -> None:
    """With a socket folder others may enter, the role logs in through it from a netless sandbox."""
    schema = grading_schema(Path("ada"))
    tenant = Tenant(schema, as_role(fresh_database, schema, "pw"))
    create_tenant(fresh_database, tenant)
    try:
        assert over_socket(fresh_database, tenant.url) is None  # already a socket URL
        url = tenant.url
        assert f"host={pg_cluster.socket_dir}" in url
        code = "import os, psycopg2; c = psycopg2.connect(os.environ['URL']); "
        code += "k = c.cursor(); k.execute('SELECT current_user'); print(k.fetchone()[0])"
        done = run_sandboxed([sys.executable, "-c", code], timeout=60, env={"URL": url})
        assert done.stdout.strip() == tenant.schema, done.stderr
    finally:
        drop_tenant(fresh_database, tenant.schema)
