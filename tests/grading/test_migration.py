"""The migration criterion: one place for the migration, judged from what Postgres reports."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from labs.grading.criteria import CRITERIA
from labs.grading.grader import Grader
from labs.grading.migration import THROWAWAY, migration_files
from labs.grading.on_postgres_checks import judge_migration
from labs.pg.cluster import TempCluster
from tests.grading import submissions as make
from tests.grading.mistakes import migrations as variant
from tests.grading.postgres_help import grading_leftovers

BOTH_MISSING = ("runs.idempotency_key", "messages (run_id, seq)")


@pytest.mark.parametrize(
    ("build", "missing"),
    [
        (variant.reference, ()),
        (variant.UNIQUE_INDEXES, ()),
        (variant.OTHER_ORDER, ()),
        (variant.ADDED_LATER, ()),
        (variant.WITHOUT_CONSTRAINTS, BOTH_MISSING),
        (variant.WITHOUT_MESSAGES_KEY, ("messages (run_id, seq)",)),
        (variant.PARTIAL_RUNS_INDEX, ("runs.idempotency_key",)),
        (variant.PARTIAL_MESSAGES_INDEX, ("messages (run_id, seq)",)),
        (variant.SEQ_ALONE, ("messages (run_id, seq)",)),
        (variant.SESSION_AND_SEQ, ("messages (run_id, seq)",)),
        (variant.KEY_AND_SESSION, ("runs.idempotency_key",)),
        (variant.DEFERRABLE_RUNS_KEY, ("runs.idempotency_key",)),
        (variant.EXPRESSION_INDEX, ("runs.idempotency_key",)),
    ],
    ids=[
        "reference",
        "unique-indexes",
        "columns-in-another-order",
        "constraints-added-after-the-tables",
        "no-constraints",
        "no-messages-key",
        "partial-unique-index-on-runs",
        "partial-unique-index-on-messages",
        "unique-seq-alone",
        "unique-session-and-seq",
        "unique-session-and-key",
        "deferrable-constraint",
        "unique-expression-index",
    ],
)
def test_the_migration_is_judged_by_what_postgres_reports_after_it_ran(
    tmp_path: Path, reachable_database: str, build: Callable[[], str], missing: tuple[str, ...]
) -> None:
    """Only a plain, immediate uniqueness on exactly the lesson's columns counts."""
    tree = make.starter_copy(tmp_path / "ada")
    variant.place(tree, build())
    outcome = judge_migration(tree, database_url=reachable_database, timeout=60)
    assert outcome.status == ("fail" if missing else "pass"), outcome.message
    for label in BOTH_MISSING:
        assert (label in outcome.message) == (label in missing), outcome.message
    assert grading_leftovers(reachable_database) == []


def test_a_partial_index_is_named_with_the_reason_it_does_not_count(
    tmp_path: Path, reachable_database: str
) -> None:
    """The failure names the index Postgres has and why it is not the uniqueness."""
    tree = make.starter_copy(tmp_path / "ada")
    variant.place(tree, variant.PARTIAL_RUNS_INDEX())
    outcome = judge_migration(tree, database_url=reachable_database, timeout=60)
    assert "runs_key_live is partial (it has a WHERE clause)" in outcome.message
    assert "WHERE" in outcome.output


def test_a_migration_that_fails_to_apply_fails_the_criterion_saying_why(
    tmp_path: Path, reachable_database: str
) -> None:
    """A migration Postgres refuses is a failed criterion with its reason, not a crash."""
    tree = make.starter_copy(tmp_path / "ada")
    statement = 'op.execute("ALTER TABLE nowhere ADD x int")'
    refused = variant.replaced(variant.after_messages(statement))
    variant.place(tree, refused())
    outcome = judge_migration(tree, database_url=reachable_database, timeout=60)
    assert outcome.status == "fail"
    assert outcome.message.startswith("the migration failed"), outcome.message


@pytest.mark.parametrize(
    "where",
    [Path("migrations"), Path("migrations") / "versions", Path("..") / "migrations"],
    ids=["inside-the-tree", "inside-the-tree-versions", "migrations-without-the-tree-folder"],
)
def test_a_migration_outside_the_one_folder_is_not_applied_and_the_message_says_where(
    tmp_path: Path, where: Path
) -> None:
    """Only migrations/versions/<tree>/ beside the tree counts; a stray script is named."""
    tree = make.starter_copy(tmp_path / "ada")
    stray = variant.place(tree, variant.reference(), (tree / where).resolve())
    assert migration_files(tree) == []
    outcome = judge_migration(tree)
    assert outcome.status == "fail"
    assert str(stray) in outcome.message
    assert str(tree.parent / "migrations" / "versions" / "starter") in outcome.message


def test_labs_grade_and_pytest_lab_tree_read_the_migration_from_the_same_folder(
    tmp_path: Path, reachable_database: str
) -> None:
    """The Postgres checks and the migration criterion apply the same files, or neither."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    variant.place(tree, variant.reference(), tree / "migrations")
    grader = Grader(tree, timeout=20.0, database_url=reachable_database)
    migration = grader.outcome(next(c for c in CRITERIA if c.kind == "migration"))
    checks = grader.outcome(next(c for c in CRITERIA if c.kind == "postgres"))
    assert migration.status == checks.status == "fail"
    # Named as in the learner's checkout, beside the folder Alembic reads.
    for message in (migration.message, checks.message):
        assert "found starter/migrations/" in message, message
        assert "move it into migrations/versions/starter" in message, message


def test_without_a_database_the_migration_runs_on_a_throwaway_cluster_and_says_so(
    tmp_path: Path, pg_cluster: TempCluster
) -> None:
    """No DATABASE_URL: the scripts run on the grader's own cluster, and the outcome says it."""
    tree = make.starter_copy(tmp_path / "ada")
    variant.place(tree, variant.PARTIAL_RUNS_INDEX())
    outcome = judge_migration(tree)
    assert outcome.status == "fail"
    assert "runs.idempotency_key" in outcome.message
    assert outcome.output.startswith(THROWAWAY)


def line_of(script: Path, text: str) -> int:
    """The number of the first line of script holding text."""
    lines = script.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


@pytest.mark.parametrize(
    ("build", "named", "told"),
    [
        (variant.DEFERRABLE_RUNS_KEY, "runs_idempotency_key_key", "DEFERRABLE, and INSERT"),
        (variant.EXPRESSION_INDEX, "runs_key_lower", "unique on an expression, (lower("),
        (variant.PARTIAL_RUNS_INDEX, "runs_key_live", "a partial index, (idempotency_key) WHERE"),
        (variant.KEY_AND_SESSION, "runs_session_key_key", "on (session_id, idempotency_key), not"),
        (variant.WITHOUT_MESSAGES_KEY, '"messages",', "makes no unique (run_id, seq) on messages"),
    ],
    ids=["deferrable", "on-an-expression", "partial", "on-other-columns", "missing"],
)
def test_a_failed_migration_names_the_line_of_its_own_script_that_made_it_so(
    tmp_path: Path, reachable_database: str, build: Callable[[], str], named: str, told: str
) -> None:
    """Whatever Postgres holds instead of a uniqueness schema.py declares, the criterion's hint is
    the learner's migration at the line that made it (or the table's create_table), said why."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    script = variant.place(tree, build())
    line = line_of(script, named) - (1 if named.startswith('"') else 0)  # create_table( above
    grader = Grader(tree, timeout=20.0, database_url=reachable_database)
    outcome = grader.outcome(next(c for c in CRITERIA if c.kind == "migration"))
    assert outcome.status == "fail"
    hint = f"hint:     migrations/versions/starter/{script.name}:{line}  the migration makes "
    (said,) = [row for row in outcome.message.splitlines() if row.startswith("hint:")]
    assert said.startswith(hint), outcome.message
    assert told in said, said


@pytest.mark.parametrize("role", ["reachable_database", "createdb_database"])
@pytest.mark.parametrize("schema", ["public", "app"])
def test_tables_made_in_another_schema_are_named_so_on_every_postgres_criterion(
    tmp_path: Path, request: pytest.FixtureRequest, schema: str, role: str
) -> None:
    """Public, which the server keeps from the submission's role, or a schema the migration made
    itself: the migration and the six checks say where the tables went, and the script's line.
    The same whether the submission has roles of its own (a superuser grades) or runs as a
    CREATEDB-only grader's role in its database (where public is the grader's to use)."""
    reachable_database = request.getfixturevalue(role)
    tree = make.fixed(tmp_path / "ada") / "starter"
    script = variant.place(tree, variant.tables_in(schema)())
    line = line_of(script, f'"{schema}"')
    grader = Grader(tree, timeout=20.0, database_url=reachable_database)
    found = {c.key: grader.outcome(c) for c in CRITERIA if c.kind in ("migration", "postgres")}
    assert len(found) == 7
    for key, outcome in found.items():
        assert outcome.status == "fail", key
        first, hint = outcome.message.splitlines()
        assert "puts its tables" in first and f" in schema {schema}, not in the one" in first
        assert "search_path" in first, first
        assert hint == f"hint:     migrations/versions/starter/{script.name}:{line}", key
    assert grading_leftovers(reachable_database) == []
