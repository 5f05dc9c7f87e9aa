"""The pytest plugin: `pytest --lab-tree PATH` grades a copy of the starter tree.

One test per acceptance criterion, each marked with its points. The learner's
code never runs in this process: the checks run in subprocesses with a
timeout, the typecheck is mypy in a subprocess, the migration is read, not
imported. A learner's failures are grades: the run exits 0 when grading
worked, whatever the score, and non-zero only when the grader itself failed.
Without --lab-tree the plugin does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from .criteria import Criterion, Grade
    from .grader import Grader


class CriterionFailed(Exception):
    """The submission did not meet a criterion: a grade, not an error of the run."""


@dataclass
class GradingRun:
    """The state of one grading session."""

    grader: Grader
    grade: Grade
    results: Path
    errors: list[str] = field(default_factory=list)


GRADING = pytest.StashKey[GradingRun]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add --lab-tree and its companions."""
    group = parser.getgroup("lab grading", "mini-koda lab: grade a copy of the starter tree")
    group.addoption(
        "--lab-tree",
        metavar="PATH",
        help="grade the lab tree at PATH instead of running the test suite",
    )
    group.addoption(
        "--lab-results",
        metavar="FILE",
        default="results.json",
        help="where to write results.json (default: ./results.json)",
    )
    group.addoption(
        "--lab-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="time limit for each process running the learner's checks",
    )
    group.addoption(
        "--lab-migrations",
        metavar="DIR",
        help="the tree's Alembic scripts (default: migrations/versions/<tree>/ beside the tree)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the points marker; set up grading when --lab-tree is given."""
    config.addinivalue_line("markers", "points(n): the points a grading criterion is worth")
    tree = config.getoption("lab_tree", None)
    if not tree:
        return
    import os

    from ..trees import tree_root
    from .criteria import Grade
    from .grader import Grader

    root = tree_root(tree)
    migrations = config.getoption("lab_migrations")
    grader = Grader(
        root,
        timeout=config.getoption("lab_timeout"),
        database_url=os.environ.get("DATABASE_URL") or None,
        migrations=Path(migrations).resolve() if migrations else None,
    )
    config.stash[GRADING] = GradingRun(
        grader, Grade(root.name), Path(config.getoption("lab_results")).resolve()
    )


class CriterionItem(pytest.Item):
    """One acceptance criterion of the lab, graded against the tree."""

    def __init__(self, *, criterion: Criterion, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.criterion = criterion
        self.add_marker(pytest.mark.points(criterion.points))
        self.user_properties.append(("points", criterion.points))

    def runtest(self) -> None:
        """Grade the criterion; a failed one is reported with its message."""
        run = self.config.stash[GRADING]
        outcome = run.grader.outcome(self.criterion)
        run.grade.outcomes[self.criterion.key] = outcome
        if outcome.status == "skip":
            pytest.skip(outcome.message)
        if not outcome.passed:
            # A check's output is its trace, already in results.json; a typecheck's is the errors.
            shown = (outcome.message, "" if self.criterion.check else outcome.output)
            raise CriterionFailed("\n".join(part for part in shown if part))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: object = None
    ) -> str | TerminalRepr:
        """The criterion's message for a failed grade; the traceback for a grader bug."""
        if isinstance(excinfo.value, CriterionFailed):
            return f"{self.criterion.title} ({self.criterion.points} points)\n{excinfo.value}"
        self.config.stash[GRADING].errors.append(f"{self.name}: {excinfo.value!r}")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the criterion is reported: the tree being graded."""
        return self.config.stash[GRADING].grader.tree, None, self.criterion.title


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """With --lab-tree, the session's tests are the criteria, not files on disk."""
    if GRADING not in session.config.stash:
        return None
    from .criteria import CRITERIA

    items: list[pytest.Item] = [
        CriterionItem.from_parent(session, name=c.key, nodeid=f"lab-tree::{c.key}", criterion=c)
        for c in CRITERIA
    ]
    session.config.hook.pytest_collection_modifyitems(
        session=session, config=session.config, items=items
    )
    session.items = items
    session.testscollected = len(items)
    session.config.hook.pytest_collectreport(
        report=pytest.CollectReport("lab-tree", "passed", None, [*items])
    )
    session.config.hook.pytest_collection_finish(session=session)
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write results.json; the exit code says whether grading worked, not the score."""
    run = session.config.stash.get(GRADING, None)
    if run is None:
        return
    from .results import write_results_json

    error = "; ".join(run.errors)
    run.grader.annotate(run.grade)
    try:
        write_results_json(run.grade, run.results, error)
    except OSError as problem:
        run.errors.append(f"could not write {run.results}: {problem}")
    if exitstatus == pytest.ExitCode.TESTS_FAILED and not run.errors:
        session.exitstatus = pytest.ExitCode.OK
    elif run.errors and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The points table, the score, and where results.json went."""
    run = terminalreporter.config.stash.get(GRADING, None)
    if run is None:
        return
    from .results import points_table

    terminalreporter.section(f"lab grade: {run.grader.tree}")
    for line in points_table(run.grade):
        terminalreporter.write_line(line)
    for note in run.grade.notes:
        terminalreporter.write_line(f"note: {note}", yellow=True)
    if run.errors:
        terminalreporter.write_line("grading itself failed: " + "; ".join(run.errors), red=True)
    else:
        terminalreporter.write_line("the learner's failures above are grades; grading worked")
    terminalreporter.write_line(f"results.json: {run.results}")
