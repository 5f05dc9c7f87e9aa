"""The pytest plugin behind `python -P -m labs.grading.pytest_main --lab-tree PATH`.

One test per acceptance criterion, each marked with its points. The learner's
code never runs in this process: the checks run in subprocesses with a
timeout, the typecheck is mypy in a subprocess, the migration runs in an
Alembic subprocess (or is read, without a database). A learner's failures
are grades: the run exits 0 when grading worked, whatever the score, unless
--lab-fail-under asks for the exit code to follow the score; it exits 3 when
the grader itself failed.

It grades only under the configuration labs.grading.pytest_main pins (see
pinned_config_problem): a plain `pytest --lab-tree` would have read the
tree's own ini file and conftest.py before this plugin ran, so it is refused.
Without --lab-tree the plugin does nothing. It loads in every pytest run where the kit
is installed (a pytest11 entry point), so its hooks import the grader only when
they grade.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .errors import CriterionFailedError, GradingRefusedError
from .server_choice import CHOICES, chosen_server

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr

    from .criteria import Criterion, Grade
    from .grader import Grader


@dataclass
class GradingRun:
    """The state of one grading session."""

    grader: Grader
    grade: Grade
    results: Path
    criteria: list[Criterion]
    fail_under: str | None = None
    errors: list[str] = field(default_factory=list)
    junit: Path | None = None  # where --lab-junit writes the JUnit XML

    def needed(self) -> int | None:
        """The points --lab-fail-under asks for, or None when it was not given.

        N is points; N% is a share of every criterion graded in this run,
        skipped ones included: a criterion that could not be graded earns
        nothing, so a gate is never passed by skipping it.
        """
        if self.fail_under is None:
            return None
        number = float(self.fail_under.rstrip("%"))
        if not self.fail_under.endswith("%"):
            return math.ceil(number)
        return math.ceil(number * sum(c.points for c in self.criteria) / 100)


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
        "--lab-junit",
        metavar="FILE",
        help="also write the grade as JUnit XML to FILE",
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
    group.addoption(
        "--lab-only",
        action="append",
        metavar="KEYS",
        help="grade only these criteria (comma-separated keys, e.g. memory-3,migration)",
    )
    group.addoption(
        "--lab-fail-under",
        metavar="N[%]",
        help="exit 1 when the score is under N points (or N%% of the points graded)",
    )
    group.addoption(
        "--lab-strict",
        action="store_true",
        help="score 0 the criteria whose region code reaches outside the lesson",
    )
    group.addoption(
        "--unsafe-no-sandbox",
        action="store_true",
        help="grade even where no sandbox can be had: the learner's code runs as you",
    )
    group.addoption(
        "--lab-postgres",
        choices=CHOICES,
        default=None,
        help="grade on Postgres on a cluster of the grader's own (own), on DATABASE_URL's "
        "server (url), or auto: own where the server binaries are installed (default: "
        "$LAB_POSTGRES, else auto)",
    )
    group.addoption(
        "--require-bwrap",
        action="store_true",
        help="refuse to grade unless bubblewrap can isolate each submission (CI's default)",
    )


FAIL_UNDER = re.compile(r"\d+(\.\d+)?%?")
COMMAND = "python -P -m labs.grading.pytest_main --lab-tree PATH"


def chosen_criteria(config: pytest.Config) -> list[Criterion]:
    """The criteria --lab-only names (all by default), or a UsageError naming an unknown one."""
    from .criteria import CRITERIA

    wanted = [key.strip() for keys in config.getoption("lab_only") or [] for key in keys.split(",")]
    known = {c.key for c in CRITERIA}
    unknown = [key for key in wanted if key not in known]
    if unknown:
        raise pytest.UsageError(
            f"--lab-only: no criterion {', '.join(unknown)}; the criteria are "
            + ", ".join(c.key for c in CRITERIA)
        )
    return [c for c in CRITERIA if not wanted or c.key in wanted]


def pytest_configure(config: pytest.Config) -> None:
    """Register the points marker; set up grading when --lab-tree is given."""
    config.addinivalue_line("markers", "points(n): the points a grading criterion is worth")
    tree = config.getoption("lab_tree", None)
    if not tree:
        return
    from .criteria import Grade
    from .grader import Grader

    # A path, always: a bare `starter` is ./starter, never an installed package of that name.
    root = Path(tree).resolve()
    if not (root / "__init__.py").is_file():
        raise pytest.UsageError(f"--lab-tree {tree}: no lab tree at {root} (no __init__.py)")
    from .pytest_main import pinned_config_problem

    problem = pinned_config_problem(config, root)
    if problem:
        raise pytest.UsageError(
            f"refusing to grade: {problem}. Grade with `{COMMAND}`, which pins pytest's "
            "configuration to the lab kit's (see labs/INSTRUCTORS.md)"
        )
    fail_under = config.getoption("lab_fail_under")
    if fail_under is not None and not FAIL_UNDER.fullmatch(fail_under):
        raise pytest.UsageError(
            f"--lab-fail-under {fail_under!r}: give points (60) or a percentage (60%)"
        )
    criteria = chosen_criteria(config)
    from labs.sandbox.errors import NoIsolationError

    from .session import begin_grading

    try:
        begin_grading(
            unsafe=config.getoption("unsafe_no_sandbox"), bwrap=config.getoption("require_bwrap")
        )
    except NoIsolationError as error:
        raise pytest.UsageError(str(error)) from None
    migrations = config.getoption("lab_migrations")
    try:
        server = chosen_server(config.getoption("lab_postgres"))
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    grader = Grader(
        root,
        timeout=config.getoption("lab_timeout"),
        database_url=server,
        migrations=Path(migrations).resolve() if migrations else None,
        strict=config.getoption("lab_strict"),
    )
    config.stash[GRADING] = GradingRun(
        grader,
        Grade(root.name),
        Path(config.getoption("lab_results")).absolute(),  # a link there is replaced, not followed
        criteria,
        fail_under,
        junit=Path(junit).absolute() if (junit := config.getoption("lab_junit")) else None,
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
        if outcome.status == "error":
            raise GradingRefusedError(outcome.message)  # the machine's failure: exit code 3
        if not outcome.passed:
            # A check's output is its trace, already in results.json; a typecheck's is the errors.
            shown = (outcome.message, "" if self.criterion.check else outcome.output)
            raise CriterionFailedError("\n".join(part for part in shown if part))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: object = None
    ) -> str | TerminalRepr:
        """The criterion's message for a failed grade; the traceback for a grader bug."""
        if isinstance(excinfo.value, CriterionFailedError):
            return f"{self.criterion.title} ({self.criterion.points} points)\n{excinfo.value}"
        if isinstance(excinfo.value, GradingRefusedError):
            errors = self.config.stash[GRADING].errors
            if str(excinfo.value) not in errors:
                errors.append(str(excinfo.value))
            return f"{self.criterion.title}: {excinfo.value}"
        run = self.config.stash[GRADING]
        run.errors.append(f"{self.name}: {excinfo.value!r}")
        # A grader's bug is the machine's failure: results.json lists the criterion as an error.
        from .criteria import Outcome

        run.grade.outcomes.setdefault(
            self.criterion.key,
            Outcome("error", f"not graded: the grader failed: {excinfo.value!r}"),
        )
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the criterion is reported: the tree being graded."""
        return self.config.stash[GRADING].grader.tree, None, self.criterion.title


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> bool | None:
    """With --lab-tree, the session's tests are the criteria, not files on disk."""
    if GRADING not in session.config.stash:
        return None
    items: list[pytest.Item] = [
        CriterionItem.from_parent(session, name=c.key, nodeid=f"lab-tree::{c.key}", criterion=c)
        for c in session.config.stash[GRADING].criteria
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
    """Write results.json; the exit code says whether grading worked (and, if asked, the score)."""
    run = session.config.stash.get(GRADING, None)
    if run is None:
        return
    import json

    from .errors import OutputError
    from .feedback import junit_xml
    from .outputs import write_safely
    from .results import results_json

    error = "; ".join(run.errors)
    run.grader.annotate(run.grade)
    try:
        write_safely(run.results, json.dumps(results_json(run.grade, error), indent=2) + "\n")
    except OutputError as problem:
        run.errors.append(str(problem))
    if run.junit is not None:
        try:
            write_safely(run.junit, junit_xml(run.grade))
        except OutputError as problem:
            run.errors.append(str(problem))
    needed = run.needed()
    if run.errors:
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
    elif exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        below = needed is not None and run.grade.score < needed
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if below else pytest.ExitCode.OK


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
    needed = run.needed()
    if needed is not None:
        verdict = "met" if run.grade.score >= needed else "NOT met: exit code 1"
        terminalreporter.write_line(
            f"--lab-fail-under {run.fail_under}: {needed} points needed, "
            f"{run.grade.score} earned: {verdict}"
        )
    if run.errors:
        terminalreporter.write_line("grading itself failed: " + "; ".join(run.errors), red=True)
    else:
        terminalreporter.write_line("the learner's failures above are grades; grading worked")
    terminalreporter.write_line(f"results.json: {run.results}")
    if run.junit is not None:
        terminalreporter.write_line(f"JUnit XML: {run.junit}")
