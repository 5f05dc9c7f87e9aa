"""The notes on a grade: what an instructor should read besides the points.

A submission can lose every Postgres point for one reason (no migration, a
migration that fails), be stopped by its sandbox (past the memory or process
cap), or have edits outside its TODO regions. None of these changes the
score; each is said once, in the note column of the summary and in
results.json. A submission whose tree as handed in grades differently from
its regions spliced into the starter, or whose regions reach outside the
lesson (flags.py), "needs review" (a column of its own). A grade made without
a sandbox says so first, everywhere it is shown.
"""

from __future__ import annotations

from pathlib import Path

from labs.checking.rules import CHECK_NUMBERS
from labs.sandbox.box import STOPPED

from ..untrusted import clean_text
from .criteria import ON_POSTGRES, Grade
from .edits import SHOWN, edits_note, edits_outside_regions
from .flags import Flag

NEEDS_REVIEW = "needs review: "
UNSAFE = (
    "graded WITHOUT A SANDBOX (--unsafe-no-sandbox): the learner's code ran as the grader, "
    "could read its files and other hand-ins, and may have changed what it reports"
)


def add_notes(grade: Grade, tree: Path, outside: list[str] | None = None) -> None:
    """Set the grade's notes and its edits outside the regions, from its outcomes and tree."""
    notes = (stopped_note(grade), postgres_note(grade), *not_graded_notes(grade))
    grade.notes = [note for note in notes if note]
    grade.outside_regions = [
        clean_text(edit) for edit in (edits_outside_regions(tree) if outside is None else outside)
    ]
    if grade.outside_regions:
        grade.notes.append(edits_note(grade.outside_regions))


def needs_review(grade: Grade) -> bool:
    """Whether a person should look before the score is used (see Grader.annotate)."""
    return any(note.startswith(NEEDS_REVIEW) for note in grade.notes)


def not_graded_notes(grade: Grade) -> list[str]:
    """One note per reason the grading machine could not grade some criteria, naming them."""
    by_reason: dict[str, list[str]] = {}
    for criterion, outcome in grade.not_graded():
        kind = "the checks on Postgres" if criterion.kind == "postgres" else criterion.key
        kinds = by_reason.setdefault(outcome.message, [])
        if kind not in kinds:
            kinds.append(kind)
    return [f"{' and '.join(kinds)}: {reason}" for reason, kinds in by_reason.items()]


def postgres_note(grade: Grade) -> str:
    """One reason when all six Postgres checks failed for it (no migration, migration failed)."""
    outcomes = [grade.outcomes.get(f"postgres-{n}") for n in CHECK_NUMBERS]
    failed = [o for o in outcomes if o is not None and o.status == "fail"]
    messages = {o.message for o in failed}
    if len(failed) == len(CHECK_NUMBERS) and len(messages) == 1:
        return ON_POSTGRES + messages.pop()
    return ""


def stopped_note(grade: Grade) -> str:
    """Why the sandbox stopped the submission (its first words), when it did."""
    for outcome in grade.outcomes.values():
        if outcome.message.startswith(STOPPED):
            return outcome.message.partition("; ")[0]
    return ""


def flags_note(flags: list[Flag], strict: bool) -> str:
    """ "needs review" for region code that reaches outside the lesson, naming where."""
    shown = ", ".join(str(flag) for flag in flags[:SHOWN]) + (
        f" and {len(flags) - SHOWN} more" if len(flags) > SHOWN else ""
    )
    scored = "scored 0 under --strict" if strict else "scored as it ran; --strict scores it 0"
    return clean_text(f"{NEEDS_REVIEW}region code reaches outside the lesson ({scored}): {shown}")
