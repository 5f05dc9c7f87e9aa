"""What a submission's migration made instead of what the lesson needs, and what follows from it.

On Postgres the store is the kit's own (infra/sql.py holds no region), so
what a check sees there depends on the learner's regions and on what the
learner's migration made. Some failures follow from the migration alone, and
a hint at a region would send the learner to a file that is already right.
Read from pg_catalog after the migration ran (indexes.py), each uniqueness
the lesson needs (labs/lesson/uniqueness.py) that Postgres does not enforce
as an arbiter of INSERT ... ON CONFLICT is a Flaw of one Kind:

- deferrable: ON CONFLICT refuses a deferrable arbiter (SQLSTATE 55000);
  the store makes every run that way, so with runs' key deferrable every
  check that fails follows from it;
- on an expression, or partial: ON CONFLICT (idempotency_key) finds no
  arbiter (42P10), the store inserts anyway, and the index refuses or lets
  in the duplicate: the check the uniqueness serves fails;
- missing, or on other columns, while shared/schema.py declares it: the
  migration lacks what the schema declares (generated before the
  declaration, or edited by hand). Where schema.py does not declare it
  either, its TODO is the right hint, and this is no Flaw.

Each Flaw names its line in the learner's migration scripts (the line that
names the index, else its table's create_table), so the hint is a place the
learner can open. schema.py is read as text (declared.py), never imported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from labs.checking.hints import Hint
from labs.checking.result import CheckResult
from labs.lesson.uniqueness import UNIQUENESSES, Uniqueness
from labs.term.i18n import N_, _
from labs.untrusted import clean_text

from .declared import SCHEMA_FILE, declared_unique
from .indexes import PgIndex

# What an index is on, as pg_get_indexdef ends: "USING btree (lower(idempotency_key))".
SHAPE = re.compile(r"\bUSING \w+ (?P<shape>.+)$")


class Kind(StrEnum):
    """Why Postgres does not enforce a uniqueness the lesson needs."""

    MISSING = "missing"
    COLUMNS = "columns"
    EXPRESSION = "expression"
    PARTIAL = "partial"
    DEFERRABLE = "deferrable"


@dataclass(frozen=True)
class Flaw:
    """One uniqueness the migration did not make as the lesson needs, and where it went wrong."""

    need: Uniqueness
    kind: Kind
    index: str  # the index or constraint Postgres has instead; "" when there is none
    shape: str  # what that index is on, as Postgres words it
    script: Path
    line: int

    def breaks(self, check: int) -> bool:
        """Whether a failure of this check follows from the flaw."""
        if self.kind is Kind.DEFERRABLE and self.need.table == "runs":
            return True  # the store makes every run through INSERT ... ON CONFLICT
        return check == self.need.check

    def hint(self, check: int) -> Hint:
        """The hint for a failure of `check` that follows from the flaw: the migration's line."""
        return Hint(str(self.script), self.line, self.told(check))

    def told(self, check: int) -> str:
        """What the flaw is, for the check its uniqueness serves; else that the failure follows."""
        followed = self.kind is Kind.DEFERRABLE and check != self.need.check
        return _(FOLLOWS if followed else TOLD[self.kind]).format(
            index=self.index,
            shape=self.shape,
            table=self.need.table,
            columns=", ".join(self.need.columns),
        )


# What each flaw is, said at the check its uniqueness serves, with the SQLSTATE Postgres gives.
TOLD = {
    Kind.DEFERRABLE: N_(
        "the migration makes {index} DEFERRABLE, and INSERT ... ON CONFLICT cannot use a "
        "deferrable constraint (SQLSTATE 55000): make it not deferrable"
    ),
    Kind.EXPRESSION: N_(
        "the migration makes {index} unique on an expression, {shape}: INSERT ... ON CONFLICT "
        "({columns}) finds no unique index or constraint it can use (SQLSTATE 42P10); make it "
        "unique on ({columns}), not on an expression"
    ),
    Kind.PARTIAL: N_(
        "the migration makes {index} a partial index, {shape}: it leaves rows out, and INSERT "
        "... ON CONFLICT ({columns}) cannot use it (SQLSTATE 42P10); drop the WHERE clause"
    ),
    Kind.COLUMNS: N_(
        "the migration makes {index} unique on {shape}, not on ({columns}) as shared/schema.py "
        "declares: generate the migration again, or correct it"
    ),
    Kind.MISSING: N_(
        "the migration makes no unique ({columns}) on {table}, which shared/schema.py declares: "
        "generate the migration again, or add the constraint to it"
    ),
}
# Said at every other check that failed because Postgres refused to make a run.
FOLLOWS = N_(
    "follows from the migration's deferrable constraint {index}: INSERT ... ON CONFLICT cannot "
    "use it (SQLSTATE 55000), so Postgres refused every new run"
)


def migration_flaws(indexes: list[PgIndex], scripts: list[Path], tree: Path) -> list[Flaw]:
    """The flaws of the migration whose scripts made these indexes, for the tree beside them."""
    declared = declared_unique(read(tree / SCHEMA_FILE))
    flaws = []
    for need in UNIQUENESSES:
        own = [index for index in indexes if index.table == need.table and index.unique]
        if any(index.why_not(need.columns) is None for index in own):
            continue
        kind, index = nearest(need, own)
        declares = (need.table, frozenset(need.columns)) in declared
        if kind in (Kind.MISSING, Kind.COLUMNS) and not declares:
            continue  # the schema lacks it too: the TODO in schema.py is the hint
        name = index.name if index is not None else ""
        script, line = located(scripts, [name] if name else [], need.table)
        flaws.append(Flaw(need, kind, name, shape_of(index), script, line))
    return flaws


def nearest(need: Uniqueness, own: list[PgIndex]) -> tuple[Kind, PgIndex | None]:
    """The unique index of need's table that comes closest to it, and why it falls short."""
    for index in own:
        if "" not in index.columns and set(index.columns) == set(need.columns):
            if index.partial:
                return Kind.PARTIAL, index
            if not index.immediate:
                return Kind.DEFERRABLE, index
    for index in own:
        if "" in index.columns and any(column in index.definition for column in need.columns):
            return Kind.EXPRESSION, index
    for index in own:
        if set(index.columns) & set(need.columns) and set(index.columns) != set(need.columns):
            return Kind.COLUMNS, index
    return Kind.MISSING, None


def shape_of(index: PgIndex | None) -> str:
    """What the index is on, from its definition: "(lower(idempotency_key))"."""
    if index is None:
        return ""
    found = SHAPE.search(index.definition)
    shape = found["shape"] if found else f"({', '.join(index.columns)})"
    return clean_text(shape, 160)


def blame(result: CheckResult, flaws: list[Flaw]) -> None:
    """Point a failed check at the migration when its failure follows from one of the flaws.

    The flaw of the check's own uniqueness comes first; then one whose
    failures reach every check (a deferrable key on runs).
    """
    if result.passed or result.number is None:
        return
    number = result.number
    for flaw in sorted(flaws, key=lambda flaw: flaw.need.check != number):
        if flaw.breaks(number):
            result.hint = flaw.hint(number)
            return


def located(scripts: list[Path], needles: list[str], table: str = "") -> tuple[Path, int]:
    """The first script line holding one of the needles, else the table's create_table line.

    Without either, the first script at line 1. The scripts are the
    learner's text: read, never run.
    """
    texts = [(script, read(script).splitlines()) for script in scripts]
    for script, lines in texts:
        for number, line in enumerate(lines, start=1):
            if any(needle in line for needle in needles):
                return script, number
    quoted = (f'"{table}"', f"'{table}'")
    for script, lines in texts:
        for number, line in enumerate(lines, start=1):
            after = " ".join(lines[number - 1 : number + 2])
            if table and "create_table" in line and any(q in after for q in quoted):
                return script, number
    return (scripts[0] if scripts else Path("migration")), 1


def elsewhere(schema: str, tables: list[str], scripts: list[Path]) -> str:
    """Why a migration that puts the lesson's tables in another schema fails, and its line."""
    schema = clean_text(schema, 63)
    script, line = located(scripts, [f'"{schema}"', f"'{schema}'", f"{schema}."])
    made = f" ({', '.join(tables)})" if tables else ""
    return (
        f"the migration puts its tables{made} in schema {schema}, not in the one the grader "
        f'gives it: leave the schema out (no schema="{schema}", no "{schema}." before a table), '
        "so they land in the schema Alembic's env.py puts first on search_path"
        f"\nhint:     {script}:{line}"
    )


def read(path: Path) -> str:
    """A learner's file as text; empty when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
