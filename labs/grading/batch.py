"""Grading a class: many submissions, each isolated, in parallel, never one stopping the rest.

A submission is a directory or a zip holding a copy of the starter tree
(anywhere inside, with its migrations/ beside it if the learner made one).
Each is taken in safely (intake.py: no link followed, zips checked before
they unpack, folders counted), copied to its own temporary directory and
graded there; its code runs only in its sandbox (labs/sandbox/box.py), with
a timeout. Without any sandbox on the machine nothing is graded unless the
instructor allowed it (labs.sandbox.modes.allow_unsafe).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from labs.sandbox.files import remove_tree
from labs.sandbox.modes import require_isolation
from labs.trees.finding import SUBPACKAGES
from labs.trees.regions import copy_tree

from ..untrusted import clean_text
from .criteria import CRITERIA, Grade, Outcome
from .errors import BrokenSubmissionError
from .grader import Grader
from .intake import Intake, take_in
from .isolate import COULD_NOT_RUN, TIMED_OUT
from .typecheck import typecheck_tree

TYPECHECK_TIMEOUT = 120.0  # for one tree


def find_tree(root: Path) -> Path:
    """The shallowest folder that looks like a lab tree: __init__.py and the subpackages."""
    candidates = [root, *sorted(p for p in root.rglob("*") if p.is_dir())]
    trees = [
        p
        for p in candidates
        if "__pycache__" not in p.parts
        and (p / "__init__.py").is_file()
        and sum((p / sub).is_dir() for sub in SUBPACKAGES) >= 2
    ]
    if not trees:
        raise BrokenSubmissionError(
            "no lab tree inside (a folder with __init__.py, shared/, infra/, gateway/, worker/)"
        )
    return min(trees, key=lambda p: len(p.parts))


def migrations_beside(tree: Path) -> Path | None:
    """The tree's migration folder in the submission: migrations/versions/<tree>/ or similar."""
    for folder in (
        tree.parent / "migrations" / "versions" / tree.name,
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
    intake: Intake


def prepare(
    source: Path,
    label: str,
    scratch: Path,
    *,
    timeout: float,
    database_url: str | None,
    strict: bool = False,
) -> Prepared | Grade:
    """Take a submission in under scratch and set up its Grader; a broken one gets its Grade."""
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        intake = take_in(source, scratch)
        found = find_tree(intake.root)
    except BrokenSubmissionError as error:
        return broken_grade(label, str(error), database_url)
    # A name of its own per submission keeps mypy's shared cache from mixing them up.
    tree = copy_tree(found, scratch / ("graded_" + re.sub(r"\W", "_", f"{scratch.name}_{label}")))
    grader = Grader(
        tree,
        timeout=timeout,
        database_url=database_url,
        migrations=migrations_beside(found),
        strict=strict,
        # Feedback names the learner's files from the top of the hand-in, never the copy's.
        shown_as="" if found == intake.root else found.relative_to(intake.root).as_posix(),
        hand_in=intake.root.resolve(),
    )
    return Prepared(label, grader, intake)


def finish(prepared: Prepared) -> Grade:
    """Grade a prepared submission: its checks, typecheck and migration, and its notes."""
    grade = prepared.grader.grade(prepared.label)
    grade.broken = trouble(grade)
    grade.notes += prepared.intake.notes()
    return grade


def broken_grade(label: str, why: str, database_url: str | None = None) -> Grade:
    """A submission that could not be graded scores zero on every criterion it is graded on."""
    grade = Grade(label, broken=why)
    for criterion in CRITERIA:
        skipped = criterion.kind == "postgres" and not database_url
        grade.outcomes[criterion.key] = Outcome("skip" if skipped else "fail", why)
    return grade


def trouble(grade: Grade) -> str:
    """Why the checks could not run at all (import error, endless loop), if that happened."""
    messages = [grade.outcomes[f"memory-{n}"].message for n in range(1, 7)]
    if all(m.startswith(COULD_NOT_RUN) or "did not finish importing" in m for m in messages):
        return messages[0]
    if any(TIMED_OUT in m for m in messages):
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
) -> list[Grade]:
    """Grade every submission, up to `jobs` at once; results come back in input order.

    All are taken in first; then each tree is typechecked (one after another,
    on one core, each in a sandbox and cache of its own) while the checks
    run beside it in parallel. NoIsolationError, before anything runs, when
    the machine gives no sandbox and unsafe grading was not allowed.
    """
    require_isolation()
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
        grade_in(scratch, sources, labels, workers, timeout, database_url, strict, done)
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
    done: Callable[[int, Grade], None],
) -> None:
    """Take every submission in under scratch, then grade them, calling done for each."""
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
                )
            except Exception as error:  # the grader's own failure for one submission
                return broken_grade(labels[index], f"grading failed: {error!r}", database_url)

        prepared = list(pool.map(take, range(len(sources))))
        ready = {i: p for i, p in enumerate(prepared) if isinstance(p, Prepared)}
        for index, item in enumerate(prepared):
            if isinstance(item, Grade):
                done(index, item)
        # The typechecks run one by one on one core while the checks run beside them.
        typechecks: dict[int, Future[Outcome]] = {
            index: typechecking.submit(
                typecheck_tree, p.grader.graded_tree, p.grader.tree.name, TYPECHECK_TIMEOUT
            )
            for index, p in ready.items()
        }

        def finish_in_class(index: int, prepared: Prepared) -> Grade:
            prepared.grader.grade_all_but_typecheck()
            prepared.grader.preset_typecheck(typechecks[index].result())
            return finish(prepared)

        futures = {pool.submit(finish_in_class, i, p): i for i, p in ready.items()}
        for future in as_completed(futures):
            index = futures[future]
            try:
                grade = future.result()
            except Exception as error:  # the grader's own failure for one submission
                grade = broken_grade(labels[index], f"grading failed: {error!r}", database_url)
            done(index, grade)


def unique_labels(sources: list[Path]) -> list[str]:
    """Submission names, numbered when two would otherwise read the same."""
    labels: list[str] = []
    for source in sources:
        label = submission_label(source)
        while label in labels:
            label += "_"
        labels.append(label)
    return labels
