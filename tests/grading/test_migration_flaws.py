"""The migration's flaws: what schema.py declares, and which failed checks follow from what."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.checking.result import CheckResult
from labs.grading.declared import declared_unique
from labs.grading.indexes import PgIndex
from labs.grading.migration_flaws import Kind, blame, migration_flaws
from labs.trees.finding import tree_root

SCRIPT = """\
def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("idempotency_key", sa.Text(), nullable=False),
        sa.UniqueConstraint("idempotency_key", name="runs_key"),
    )
    op.create_table(
        "messages",
        sa.Column("seq", sa.Integer(), nullable=False),
    )
"""
PRIMARY_KEYS = [
    PgIndex("runs", "runs_pkey", True, False, True, True, ("id",), "(id)"),
    PgIndex("messages", "messages_pkey", True, False, True, True, ("id",), "(id)"),
]
RUNS_KEY = PgIndex(
    "runs",
    "runs_key",
    True,
    False,
    True,
    True,
    ("idempotency_key",),
    "USING btree (idempotency_key)",
)
MESSAGES_KEY = PgIndex(
    "messages",
    "messages_key",
    True,
    False,
    True,
    True,
    ("run_id", "seq"),
    "USING btree (run_id, seq)",
)
MODEL = """
class {name}(SQLModel, table=True):
    __tablename__ = "{table}"
    __table_args__ = (
        Index("{table}_session_id_idx", "session_id"),
{args}
    )
{fields}
"""


def schema_source(runs: str = "", messages: str = "", key_field: str = "") -> str:
    """A schema.py whose Run and Message declare what is given, in their __table_args__."""
    field = f"    idempotency_key: str = {key_field}" if key_field else ""
    return MODEL.format(name="Run", table="runs", args=runs, fields=field) + MODEL.format(
        name="Message", table="messages", args=messages, fields=""
    )


RUN_SEQ = frozenset({"run_id", "seq"})


@pytest.mark.parametrize(
    ("source", "declares"),
    [
        (schema_source(messages='UniqueConstraint("run_id", "seq", name="k"),'), True),
        (schema_source(messages='sa.UniqueConstraint("seq", "run_id"),'), True),
        (schema_source(messages='Index("k", "run_id", "seq", unique=True),'), True),
        (schema_source(messages='Index("k", "run_id", "seq"),'), False),
        (schema_source(messages='UniqueConstraint("seq", name="k"),'), False),
        (schema_source(runs='UniqueConstraint("run_id", "seq", name="k"),'), False),
        (schema_source(messages="# TODO(check 5): declare (run_id, seq) unique"), False),
        ((tree_root("starter") / "shared" / "schema.py").read_text(encoding="utf-8"), False),
        ((tree_root("solution") / "shared" / "schema.py").read_text(encoding="utf-8"), True),
        ("class Message(:\n", False),
    ],
    ids=[
        "unique-constraint",
        "unique-constraint-of-sa-columns-in-another-order",
        "unique-index",
        "plain-index",
        "seq-alone",
        "on-another-table",
        "a-todo-only",
        "the-starter",
        "the-solution",
        "not-python",
    ],
)
def test_schema_py_declares_run_id_and_seq_unique_in_any_of_the_ways_sqlmodel_takes(
    source: str, declares: bool
) -> None:
    """A constraint or a unique index on exactly (run_id, seq) of messages counts, read as text."""
    assert (("messages", RUN_SEQ) in declared_unique(source)) == declares


def test_a_field_declared_unique_declares_its_column() -> None:
    """`idempotency_key: str = Field(unique=True)` declares runs.idempotency_key unique."""
    declared = declared_unique(schema_source(key_field="Field(sa_type=Text, unique=True)"))
    assert ("runs", frozenset({"idempotency_key"})) in declared
    assert ("runs", frozenset({"idempotency_key"})) not in declared_unique(
        schema_source(key_field="Field(sa_type=Text)")
    )


def tree_declaring(folder: Path, source: str) -> Path:
    """A tree folder holding only shared/schema.py with this text."""
    (folder / "shared").mkdir(parents=True)
    (folder / "shared" / "schema.py").write_text(source, encoding="utf-8")
    return folder


def result(number: int, passed: bool = False) -> CheckResult:
    """A check's result, failed unless said otherwise."""
    return CheckResult(str(number), number, f"check {number}", passed=passed)


BOTH = schema_source(
    runs='UniqueConstraint("idempotency_key", name="runs_key"),',
    messages='UniqueConstraint("run_id", "seq", name="messages_key"),',
)


@pytest.mark.parametrize(
    ("indexes", "kind", "follows"),
    [
        (
            [PgIndex("runs", "runs_key", True, False, False, True, ("idempotency_key",), "x")],
            Kind.DEFERRABLE,
            {1, 2, 3, 4, 5, 6},
        ),
        (
            [
                PgIndex(
                    "runs",
                    "runs_key",
                    True,
                    False,
                    True,
                    True,
                    ("",),
                    "USING btree (lower(idempotency_key))",
                )
            ],
            Kind.EXPRESSION,
            {3},
        ),
        (
            [PgIndex("runs", "runs_key", True, True, True, True, ("idempotency_key",), "x")],
            Kind.PARTIAL,
            {3},
        ),
        ([], Kind.MISSING, {3}),
        (
            [
                PgIndex(
                    "runs",
                    "runs_key",
                    True,
                    False,
                    True,
                    True,
                    ("session_id", "idempotency_key"),
                    "",
                )
            ],
            Kind.COLUMNS,
            {3},
        ),
    ],
    ids=["deferrable", "on-an-expression", "partial", "missing", "on-other-columns"],
)
def test_only_the_failures_that_follow_from_a_flaw_are_pointed_at_the_migration(
    tmp_path: Path, indexes: list[PgIndex], kind: Kind, follows: set[int]
) -> None:
    """A flaw of runs' key re-points its check's failure; a deferrable one, every failure; a
    passing check, and a failure that does not follow, keep their own hint."""
    script = tmp_path / "0001_learner.py"
    script.write_text(SCRIPT, encoding="utf-8")
    tree = tree_declaring(tmp_path / "starter", BOTH)
    (flaw,) = migration_flaws([*PRIMARY_KEYS, *indexes, MESSAGES_KEY], [script], tree)
    assert flaw.kind is kind
    results = [result(number) for number in range(1, 7)] + [result(3, passed=True)]
    for each in results:
        blame(each, [flaw])
    pointed = {r.number for r in results if r.hint is not None}
    assert pointed == follows
    assert all(r.hint is None for r in results if r.passed)
    line = 5 if indexes else 2  # the line naming the index, else the table's create_table
    assert {(r.hint.path, r.hint.line) for r in results if r.hint} == {(str(script), line)}


def test_a_missing_uniqueness_is_a_flaw_only_where_schema_py_declares_it(tmp_path: Path) -> None:
    """Without (run_id, seq) in the migration, schema.py's TODO stays the hint until it declares
    the constraint; then the migration's create_table of messages is."""
    script = tmp_path / "0001_learner.py"
    script.write_text(SCRIPT, encoding="utf-8")
    indexes = [*PRIMARY_KEYS, RUNS_KEY]
    undeclared = tree_declaring(tmp_path / "todo", schema_source(runs="", messages=""))
    assert migration_flaws(indexes, [script], undeclared) == []
    (flaw,) = migration_flaws(indexes, [script], tree_declaring(tmp_path / "declared", BOTH))
    assert (flaw.kind, flaw.need.check, flaw.line) == (Kind.MISSING, 5, 7)
