"""Grading one tree on every criterion; each kind is worked out once and remembered.

One Grader grades one tree, whoever asked: the pytest plugin asks it one
criterion at a time, `labs grade` asks each submission's Grader for the
whole Grade. A class typechecks its trees one after another on one core,
beside the checks: batch.py starts each Grader's typecheck on that lane
(start_typecheck), and the Grader waits for it when its grade needs it.
"""

from __future__ import annotations

import tempfile
import weakref
from collections.abc import Sequence
from concurrent.futures import Executor, Future
from dataclasses import replace
from pathlib import Path

from labs.sandbox.files import remove_tree
from labs.sandbox.limits import SandboxMode
from labs.sandbox.modes import machine_isolation

from ..untrusted import clean_text
from .criteria import CRITERIA, Criterion, Grade, Kind, Outcome
from .edits import edits_outside_regions
from .flags import Flag, criteria_flagged, region_flags
from .hand_in import copy_folder, walk
from .isolate import check_outcomes
from .migration import migration_files, migration_folder
from .notes import NEEDS_REVIEW, UNSAFE, add_notes, flags_note
from .on_postgres_checks import grade_on_postgres
from .places import Places, tree_places
from .rules import STRICT
from .splice import splice
from .typecheck import typecheck_tree


def cleaned(outcome: Outcome, places: Places) -> Outcome:
    """An outcome whose texts are safe to show, its paths the learner's own (places.py).

    Newlines stay: expected, got and hint are lines of their own; each output
    that holds one line per cell (the class table, the CSV) makes them spaces.
    """
    return replace(
        outcome,
        message=places.shown(clean_text(outcome.message, keep_newlines=True)),
        output=places.shown(clean_text(outcome.output, keep_newlines=True)),
        test_code=places.shown(clean_text(outcome.test_code, keep_newlines=True)),
        printed=places.shown(clean_text(outcome.printed, keep_newlines=True)),
    )


def review_note(differ: list[str], unmatched: list[str]) -> str:
    """Why a grade needs a person: the tree as handed in grades differently."""
    reasons = []
    if differ:
        reasons.append(
            "its regions alone (spliced into the shipped starter) and the tree as handed in "
            "grade differently on " + ", ".join(differ)
        )
    if unmatched:
        reasons.append("its TODO markers do not match the starter's in " + ", ".join(unmatched))
    return f"{NEEDS_REVIEW}{'; '.join(reasons)} (a criterion is scored only when it passes both)"


def links_inside(tree: Path) -> bool:
    """Whether a folder holds a symbolic link anywhere (not following any)."""
    for folder, _, files in walk(tree, capped=False):
        if any((folder / name).is_symlink() for name in files):
            return True
    return False


def scratch_folder(owner: object, prefix: str) -> Path:
    """A temporary folder removed (without recursion) when owner is collected."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    weakref.finalize(owner, remove_tree, folder)
    return folder


class Grader:
    """Grades the tree at `tree`: checks out of process, typecheck, its migration.

    The checks and the typecheck read the spliced tree (the shipped starter
    with the tree's region bodies, splice.py). A tree edited outside its
    regions is also graded as handed in, and scored only where both pass. Region
    code that reaches outside the lesson is flagged (flags.py); with strict,
    the criteria it serves score 0.
    """

    def __init__(
        self,
        tree: Path,
        *,
        timeout: float = 10.0,
        typecheck_timeout: float = 120.0,
        database_url: str | None = None,
        migrations: Path | None = None,
        splicing: bool = True,
        strict: bool = False,
        shown_as: str | None = None,
        hand_in: Path | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        """Set up the grading of the tree at `tree`, its migration in `migrations` or beside it.

        shown_as and hand_in say how the learner names its paths (places.tree_places);
        notes are what taking the hand-in in found (which tree, what was left out), for
        the grade's notes.
        """
        self.tree = tree.resolve()  # the tree as handed in
        given, given_migrations = self.tree, migration_folder(self.tree, migrations)
        found = migration_files(self.tree, migrations)
        beside = migrations or (found[0].parent if found else None)
        self.hand_in_notes = list(notes)
        if links_inside(self.tree) or (beside is not None and links_inside(beside)):
            # Never read through a learner's link (pytest --lab-tree takes the tree as it is).
            scratch = scratch_folder(self, "lab-taken-")
            taken = copy_folder(self.tree, scratch / self.tree.name)
            self.tree, self.hand_in_notes = taken.root, self.hand_in_notes + taken.notes()
            if beside is not None:
                taken = copy_folder(beside, scratch / "migrations")
                migrations, self.hand_in_notes = taken.root, self.hand_in_notes + taken.notes()
        self.timeout = timeout
        self.typecheck_timeout = typecheck_timeout
        self.database_url = database_url
        self.migrations = migrations
        self.strict = strict
        self._checks: dict[Kind, dict[int, Outcome]] = {}
        self._other: dict[Kind, Outcome] = {}
        self._typecheck: Future[Outcome] | None = None  # started on a class's lane
        # Edits outside the regions never count: grade the regions in the shipped starter.
        self.outside = edits_outside_regions(self.tree) if splicing else []
        self.flags: list[Flag] = region_flags(self.tree) if splicing else []
        self.graded_tree, self.unmatched = self.tree, list[str]()
        if splicing:
            self.graded_tree = scratch_folder(self, "lab-spliced-") / self.tree.name
            self.unmatched = splice(self.tree, self.graded_tree)
        self.as_handed_in = (
            Grader(
                self.tree,
                timeout=timeout,
                typecheck_timeout=typecheck_timeout,
                database_url=database_url,
                migrations=migrations,
                splicing=False,
                shown_as=shown_as,
                hand_in=hand_in,
            )
            if self.outside
            else None
        )
        self.differ: list[str] = []
        self.unsafe = machine_isolation().mode == SandboxMode.NONE
        # Paths as the learner knows them (shown_as: the tree from the top of the hand-in).
        self.places = tree_places(
            given,
            given_migrations,
            [self.tree, self.graded_tree],
            [migrations] if migrations is not None else [],
            shown_as=shown_as,
            hand_in=hand_in,
        )

    def outcome(self, criterion: Criterion) -> Outcome:
        """How the tree does on one criterion, its texts cleaned of control characters.

        With edits outside the regions, a criterion passes only when it passes
        both spliced and as handed in: those edits can neither raise the score
        nor hide a tree that does not work as handed in (a stub or a setting
        of the hand-in's may pass it as handed in; the spliced tree has none).
        """
        mine = cleaned(self._outcome(criterion), self.places)
        if self.as_handed_in is not None:
            theirs = self.as_handed_in.outcome(criterion)
            if theirs.status != mine.status and criterion.key not in self.differ:
                self.differ.append(criterion.key)
            mine = theirs if not theirs.passed else mine  # a failure as handed in says why
        flagged = criteria_flagged(self.flags).get(criterion.key, [])
        if self.strict and flagged and mine.status != "skip":
            where = ", ".join(str(flag) for flag in flagged[:3])
            message = f"scored 0 under --strict: {where}"
            mine = replace(mine, status="fail", message=message, rules=(STRICT,), trouble=None)
        if self.unsafe:
            mine = replace(mine, output=f"{UNSAFE}\n{mine.output}")
        return mine

    def _outcome(self, criterion: Criterion) -> Outcome:
        if criterion.kind in ("postgres", "migration") and "migration" not in self._other:
            self._on_postgres()
        if criterion.check is not None:
            if criterion.kind not in self._checks:
                self._checks[criterion.kind] = check_outcomes(
                    self.graded_tree, criterion.kind, timeout=self.timeout
                )
            return self._checks[criterion.kind][criterion.check]
        if criterion.kind not in self._other:
            self._other[criterion.kind] = self._typechecked()
        return self._other[criterion.kind]

    def _typechecked(self) -> Outcome:
        """The typecheck's outcome: the one started on a class's lane, or one run now."""
        return self.typecheck() if self._typecheck is None else self._typecheck.result()

    def _on_postgres(self) -> None:
        """The migration criterion and the six checks on Postgres, from one run of the
        submission's migration: on DATABASE_URL's server or else the grader's own cluster."""
        found = grade_on_postgres(
            self.database_url,
            self.tree,
            self.graded_tree,
            self.migrations,
            timeout=self.timeout,
            migration_timeout=self.typecheck_timeout,
        )
        self._other["migration"], self._checks["postgres"] = found.migration, found.checks

    def typecheck(self) -> Outcome:
        """mypy --strict over the spliced tree, sandboxed; only errors in the tree count."""
        return typecheck_tree(self.graded_tree, self.tree.name, self.typecheck_timeout)

    def start_typecheck(self, lane: Executor) -> None:
        """Start the typecheck now on lane, where a class's typechecks run one at a time beside
        its checks; the grade waits for it."""
        if self._typecheck is None:
            self._typecheck = lane.submit(self.typecheck)

    def grade(self, name: str | None = None) -> Grade:
        """Every criterion's outcome, as one Grade, with the notes an instructor should read.

        The typecheck is taken last: one started on a class's lane may still be running.
        """
        last = sorted(CRITERIA, key=lambda criterion: criterion.kind == "typecheck")
        outcomes = {criterion.key: self.outcome(criterion) for criterion in last}
        grade = Grade(name or self.tree.name)
        grade.outcomes = {criterion.key: outcomes[criterion.key] for criterion in CRITERIA}
        self.annotate(grade)
        return grade

    def annotate(self, grade: Grade) -> None:
        """Add the notes an instructor should read (see notes.py), and "needs review".

        A tree edited outside its regions is graded twice, spliced and as
        handed in; where any criterion comes out differently it needs review.
        So does a tree whose regions reach outside the lesson. What taking the
        hand-in in found comes last.
        """
        add_notes(grade, self.tree, self.outside)
        grade.notes += [note for note in self.hand_in_notes if note not in grade.notes]
        if self.flags:
            grade.notes.insert(0, flags_note(self.flags, self.strict))
        if self.differ or self.unmatched:
            grade.notes.insert(0, review_note(self.differ, self.unmatched))
        if self.unsafe:
            grade.notes.insert(0, UNSAFE)
