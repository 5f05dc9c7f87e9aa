"""Running a submission's checks: the driver here, the tree in a sandboxed host.

The checks run in the grader's process through labs.checking.runner.run_checks, which
never imports the tree: a tree host (labs/checking/host.py) imports it in a sandbox of
its own (labs/sandbox/launcher.py) and answers requests over pipes. The
verdict is decided from those answers alone (checked against inputs drawn
fresh from a seed) and, on Postgres, from what the grader's own connection
reads in the submission's schema. One host serves the six checks of a store;
a check that hangs fails as timed out, its host and sandbox are killed, and a
new one serves the checks that remain.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from labs.checking.report import Report
from labs.checking.result import CheckResult
from labs.checking.rules import CHECK_NUMBERS, did_not_finish
from labs.checking.runner import run_checks
from labs.sandbox.box import STOPPED
from labs.sandbox.launcher import SandboxedLauncher

from ..untrusted import clean_text
from .criteria import Outcome, Trouble

COULD_NOT_RUN = "the checks could not run: "
TRACE_LIMIT = 1500  # characters of a check's trace kept beside its message: the last calls
# The name labs.trees.finding gives a tree imported by path; learners know their files as shared/...
SYNTHETIC_PACKAGE = re.compile(r"labtree_[0-9a-f]+\.?")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a trusted tool's process (the baseline typecheck): no bytecode left."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    env.pop("MOCK", None)
    return env


def untrusted(value: object, *, lines: bool = False, limit: int = 2000) -> str:
    """Text that came from the learner's process, cleaned and cut to a sane length."""
    text = value if isinstance(value, str) else ""
    return clean_text(SYNTHETIC_PACKAGE.sub("", text[:limit]), keep_newlines=lines)


def last_calls(lines: list[str], limit: int = TRACE_LIMIT) -> str:
    """The end of a trace, whole lines within limit characters: where a failing check failed."""
    kept: list[str] = []
    size = 0
    for line in reversed(lines):
        size += len(line) + 1
        if size > limit:
            kept.append(f"… {len(lines) - len(kept)} earlier calls left out")
            break
        kept.append(line)
    return "\n".join(reversed(kept))


def trouble_of(result: CheckResult) -> Trouble | None:
    """Why a check never judged the answer, as the driver decided it: it could not start
    (the tree did not import), or it was stopped at its time limit."""
    if not result.ran:
        return Trouble.COULD_NOT_RUN
    if did_not_finish(result.key) in result.rules:
        return Trouble.TIMED_OUT
    return None


def outcomes_of(report: Report) -> dict[int, Outcome]:
    """The six checks' outcomes from a report, worded as results.json words them, cleaned.

    A run that could not start (the tree does not import, the store does
    not open) fails all six for its one reason, as checks that could not run.
    """
    outcomes: dict[int, Outcome] = {}
    for result in report.results:
        if result.number is not None and result.number in CHECK_NUMBERS:
            outcomes[result.number] = Outcome(
                "pass" if result.passed else "fail",
                untrusted(result.message, lines=True),  # expected, got, hint: a line each
                untrusted(last_calls(result.trace_lines()), lines=True),
                untrusted(result.test_code, lines=True),
                printed=untrusted(result.output, lines=True, limit=8192),
                ran=result.ran,
                rules=result.rules,
                trouble=trouble_of(result),
            )
    if report.error:
        fail_rest(outcomes, f"{COULD_NOT_RUN}{untrusted(report.error)}")
    return outcomes


def check_outcomes(
    tree: Path,
    store: str = "memory",
    *,
    timeout: float = 10.0,
    database_url: str | None = None,
    tenant_url: str | None = None,
    schema: str | None = None,
    seed: int | None = None,
    explain: Callable[[CheckResult], None] | None = None,
) -> dict[int, Outcome]:
    """Each of the six checks' outcome for the tree at `tree`, its host in a sandbox.

    On Postgres `database_url` is the grader's own (the driver reads the
    tables with it) and `tenant_url` the submission's role, the only one its
    host is given; `schema` is the submission's schema. `explain` may point a
    result at what its failure follows from before it is worded (on Postgres:
    a flaw of the migration, migration_flaws.py).
    """
    launcher = SandboxedLauncher(database_url=tenant_url, schema=schema)
    report = run_checks(
        tree,
        store,
        launcher=launcher,
        check_timeout=timeout,
        start_timeout=timeout,
        database_url=database_url,
        schema=schema,
        seed=seed,
    )
    if explain is not None:
        for result in report.results:
            explain(result)
    return with_stops(outcomes_of(report), launcher.stops)


def with_stops(outcomes: dict[int, Outcome], stops: list[str]) -> dict[int, Outcome]:
    """The outcomes, each failure saying first why the sandbox stopped the submission, if it did."""
    if not stops:
        return outcomes
    why = STOPPED + "; ".join(dict.fromkeys(stops))
    return {
        number: outcome if outcome.passed else replace(outcome, message=f"{why}; {outcome.message}")
        for number, outcome in outcomes.items()
    }


def fail_rest(outcomes: dict[int, Outcome], why: str) -> None:
    """Fail every check not yet graded, for one shared reason: they could not run."""
    for number in CHECK_NUMBERS:
        outcomes.setdefault(number, Outcome("fail", why, ran=False, trouble=Trouble.COULD_NOT_RUN))
