"""The rules graded beside the six checks': the migration's, the typecheck's and --strict's.

Each is a labs.checking.rules.Rule, with a stable id and a title worded where
it is shown, so the class report groups every failing criterion the same way.
A failing criterion that names no rule of its own (the typecheck, a migration
that is missing or did not run, a check that could not judge the tree) falls
under its kind's rule (`for_kind`): it is still counted, never dropped.
"""

from __future__ import annotations

from labs.checking.rules import Rule
from labs.lesson.uniqueness import Uniqueness
from labs.term.i18n import N_

TYPECHECK = Rule("typecheck", N_("the tree does not typecheck (mypy --strict, no explicit Any)"))
STRICT = Rule("strict", N_("region code reaches outside the lesson (scored 0 under --strict)"))
MIGRATION_OTHER = Rule(
    "migration.other",
    N_("the migration is missing, fails, or lacks a uniqueness (see each report)"),
)
MEMORY_OTHER = Rule(
    "memory.other", N_("a check on memory failed in a way no rule names (see each report)")
)
POSTGRES_OTHER = Rule(
    "postgres.other",
    N_("a check on Postgres failed in a way no rule names, often the migration (see each report)"),
)
KINDS = {
    "memory": MEMORY_OTHER,
    "postgres": POSTGRES_OTHER,
    "typecheck": TYPECHECK,
    "migration": MIGRATION_OTHER,
}


def lacks(need: Uniqueness) -> Rule:
    """The migration leaves Postgres without one of the lesson's uniquenesses."""
    return Rule(
        f"migration.lacks:{need.table}({','.join(need.columns)})",
        N_("the migration lacks the unique constraint on {columns}"),
        (("columns", need.label),),
    )


def for_kind(kind: str) -> Rule:
    """The rule a failing criterion of this kind falls under when it names none."""
    return KINDS[kind]
