"""Grading a class: many submissions, each isolated, in parallel, never one stopping the rest.

A submission is a directory or a zip holding a copy of the starter tree
(anywhere inside, with its migrations/ beside it if the learner made one).
Each is taken in safely, copied once into the grader's scratch space
(hand_in.py: no link followed, zips checked before they unpack, folders
counted, what is not the lesson's left out and named), its tree chosen by
name (tree_choice.py) and graded there by a Grader of its own (grader.py);
its code runs only in its sandbox (labs/sandbox/box.py), with a timeout.
Without any sandbox on the machine nothing is graded unless the instructor
allowed it (labs.sandbox.modes.allow_unsafe). A database no hand-in could be
graded on refuses the class before any is graded (class_database.py).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from labs.checking.rules import CHECK_NUMBERS
from labs.pg.cluster import find_bindir
from labs.sandbox.files import remove_tree
from labs.sandbox.modes import require_isolation

from ..untrusted import clean_text
from .class_database import check_class_database, check_throwaway
from .criteria import CRITERIA, Grade, Outcome, Trouble
from .errors import BrokenSubmissionError
from .grader import Grader
from .hand_in import take_in
from .migration import migration_files
from .tree_choice import TREE_NAME, choose_tree, tree_name_error


def migrations_beside(tree: Path, wanted: str = TREE_NAME) -> Path | None:
    """The tree's migration folder in the submission: migrations/versions/<tree>/ or similar.

    A tree graded under another name than the one wanted (a learner who
    renamed starter/) may keep its migration where Alembic wrote it for that name.
    """
    for folder in (
        tree.parent / "migrations" / "versions" / tree.name,
        tree.parent / "migrations" / "versions" / wanted,
        tree.parent / "migrations" / "versions",
        tree / "migrations",
    ):
        if folder.is_dir():
            return folder
    return None


@dataclass
class Prepared:
    """A submission taken in and ready to grade."""

    label: str
    grader: Grader


def prepare(
    source: Path,
    label: str,
    scratch: Path,
    *,
    timeout: float,
    database_url: str | None,
    strict: bool = False,
    tree_name: str = TREE_NAME,
) -> Prepared | Grade:
    """Take a submission in under scratch and set up its Grader; a broken one gets its Grade.

    The chosen tree is then moved out of the hand-in, beside it (a rename:
    nothing is copied twice), into a folder named for the submission
    (graded_s3_ada): a name no learner writes, so every path from it is known
    for the grader's own and shown as the learner's (places.py).
    """
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        hand_in = take_in(source, scratch)
    except BrokenSubmissionError as error:
        return broken_grade(label, str(error), database_url)
    try:
        chosen = choose_tree(hand_in.root, tree_name, submission_label(source))
    except BrokenSubmissionError as error:
        grade = broken_grade(label, str(error), database_url)
        grade.notes += hand_in.notes()
        return grade
    found = chosen.tree
    migrations = migrations_beside(found, tree_name)
    tree = found.rename(scratch / ("graded_" + re.sub(r"\W", "_", f"{scratch.name}_{label}")))
    if migrations is not None and migrations.is_relative_to(found):
        migrations = tree / migrations.relative_to(found)  # moved with the tree
    grader = Grader(
        tree,
        timeout=timeout,
        database_url=database_url,
        migrations=migrations,
        strict=strict,
        # Feedback names the learner's files from the top of the hand-in, never the grader's.
        shown_as="" if found == hand_in.root else found.relative_to(hand_in.root).as_posix(),
        hand_in=hand_in.root.resolve(),
        notes=chosen.notes + hand_in.notes(),
    )
    return Prepared(label, grader)


def finish(prepared: Prepared) -> Grade:
    """Grade a prepared submission: its checks, typecheck and migration, and its notes."""
    grade = prepared.grader.grade(prepared.label)
    grade.broken = trouble(grade)
    return grade


def broken_grade(label: str, why: str, database_url: str | None = None) -> Grade:
    """A submission that could not be graded scores zero on every criterion it is graded on.

    None of them could run against it (results.json says error, as for a tree that does
    not import).
    """
    grade = Grade(label, broken=why)
    for criterion in CRITERIA:
        skipped = criterion.kind == "postgres" and not database_url and find_bindir() is None
        grade.outcomes[criterion.key] = Outcome("skip" if skipped else "fail", why, ran=False)
    return grade


def trouble(grade: Grade) -> str:
    """Why the checks could not run at all (import error, endless loop), if that happened."""
    checks = [grade.outcomes[f"memory-{n}"] for n in CHECK_NUMBERS]
    if all(check.trouble is Trouble.COULD_NOT_RUN for check in checks):
        return checks[0].message
    if any(check.trouble is Trouble.TIMED_OUT for check in checks):
        return "some checks timed out (an endless loop?)"
    return ""


def submission_label(source: Path) -> str:
    """A submission's name in the summary: its file or folder name without .zip."""
    return source.name.removesuffix(".zip") or str(source)


def grade_all(
    sources: list[Path],
    *,
    jobs: int | None = None,
    timeout: float = 10.0,
    database_url: str | None = None,
    on_done: Callable[[Grade], None] | None = None,
    strict: bool = False,
    tree_name: str = TREE_NAME,
) -> list[Grade]:
    """Grade every submission, up to `jobs` at once; results come back in input order.

    All are taken in first; then each tree is typechecked (one after another,
    on one core, each in a sandbox and cache of its own) while the checks
    run beside it in parallel. NoIsolationError, before anything runs, when
    the machine gives no sandbox and unsafe grading was not allowed;
    GradingRefusedError, before any is graded, when the database (DATABASE_URL,
    or the throwaway one the migrations need without it) cannot grade any.
    tree_name is the folder name of the tree graded in each hand-in.
    """
    require_isolation()
    if why := tree_name_error(tree_name):
        raise ValueError(why)
    if database_url:
        check_class_database(database_url)
    labels = [clean_text(label) for label in unique_labels(sources)]
    workers = max(1, min(jobs or os.cpu_count() or 1, len(sources) or 1))
    grades: dict[int, Grade] = {}

    def done(index: int, grade: Grade) -> None:
        grades[index] = grade
        if on_done:
            on_done(grade)

    # Removed without recursion: a hand-in may hold a folder deeper than Python recurses.
    scratch = tempfile.mkdtemp(prefix="lab-class-")
    try:
        grade_in(scratch, sources, labels, workers, timeout, database_url, strict, tree_name, done)
    finally:
        remove_tree(Path(scratch))
    return [grades[i] for i in range(len(sources))]


def grade_in(
    scratch: str,
    sources: list[Path],
    labels: list[str],
    workers: int,
    timeout: float,
    database_url: str | None,
    strict: bool,
    tree_name: str,
    done: Callable[[int, Grade], None],
) -> None:
    """Take every submission in under scratch, then grade them, calling done for each.

    Without a database of the instructor's, the throwaway one the migrations
    run on is started (or refuses the class) once all are taken in, before
    any is graded.
    """
    with (
        ThreadPoolExecutor(max_workers=workers) as pool,
        ThreadPoolExecutor(max_workers=1) as typechecking,
    ):

        def take(index: int) -> Prepared | Grade:
            try:
                return prepare(
                    sources[index],
                    labels[index],
                    Path(scratch) / f"s{index}",
                    timeout=timeout,
                    database_url=database_url,
                    strict=strict,
                    tree_name=tree_name,
                )
            except Exception as error:  # the grader's own failure for one submission
                return broken_grade(labels[index], f"grading failed: {error!r}", database_url)

        prepared = list(pool.map(take, range(len(sources))))
        ready = {i: p for i, p in enumerate(prepared) if isinstance(p, Prepared)}
        if not database_url and any(has_migration(p) for p in ready.values()):
            check_throwaway()
        for index, item in enumerate(prepared):
            if isinstance(item, Grade):
                done(index, item)
        # The typechecks run one by one on one core while the checks run beside them.
        for item in ready.values():
            item.grader.start_typecheck(typechecking)
        futures = {pool.submit(finish, p): i for i, p in ready.items()}
        for future in as_completed(futures):
            index = futures[future]
            try:
                grade = future.result()
            except Exception as error:  # the grader's own failure for one submission
                grade = broken_grade(labels[index], f"grading failed: {error!r}", database_url)
            done(index, grade)


def has_migration(prepared: Prepared) -> bool:
    """Whether the submission has a migration to run (on the throwaway Postgres, without one)."""
    return bool(migration_files(prepared.grader.tree, prepared.grader.migrations))


def unique_labels(sources: list[Path]) -> list[str]:
    """Submission names, numbered when two would otherwise read the same."""
    labels: list[str] = []
    for source in sources:
        label = submission_label(source)
        while label in labels:
            label += "_"
        labels.append(label)
    return labels
