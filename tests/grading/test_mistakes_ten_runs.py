"""Every answer of the mistakes catalogue, graded ten times, gets one verdict.

A grade must be a function of the learner's code alone: ten seeds, and the
host's real clock started at ten moments, give every answer the same checks
failed each time (a module of its own, so the test runner can give it a worker).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import time_machine

from labs.checking.launch import ForkLauncher
from labs.checking.runner import run_checks
from tests.grading.mistakes.catalogue import CATALOGUE, Answer, build

pytestmark = pytest.mark.slow  # the whole catalogue, ten times

# Where the host's real clock starts: 0.3 s before a minute ends, a year's last second, others.
STARTS = (
    datetime(2026, 3, 1, 12, 0, 59, 700_000, tzinfo=UTC),
    datetime(2025, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC),
    datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC),
    datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC),
    datetime(2024, 2, 29, 6, 59, 58, tzinfo=UTC),
    datetime(2027, 7, 4, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 10, 25, 1, 59, 59, 900_000, tzinfo=UTC),
    datetime(2030, 1, 1, 0, 0, 0, 100_000, tzinfo=UTC),
    datetime(2021, 6, 15, 18, 45, 59, 990_000, tzinfo=UTC),
    datetime(2026, 5, 5, 5, 5, 5, tzinfo=UTC),
)


@pytest.mark.parametrize("answer", [pytest.param(a, id=a.name) for a in CATALOGUE])
def test_each_answer_gets_one_verdict_in_ten_runs(tmp_path: Path, answer: Answer) -> None:
    """Ten seeds, the host's real clock started at ten moments (one 0.3 s before a minute
    ends, one at a year's last second): every run fails exactly the catalogue's checks."""
    tree = build(answer, tmp_path / answer.name)
    differing = []
    for run, start in enumerate(STARTS):
        seed = 1_000_003 * run + len(answer.name)
        # A forked host inherits the moved clock: its clock ticks on from `start`.
        with time_machine.travel(start, tick=True):
            report = run_checks(str(tree), seed=seed, launcher=ForkLauncher())
        failed = {r.number for r in report.results if not r.passed and r.number is not None}
        if failed != set(answer.memory_fails):
            # Each failed check's expected and got, so a rare difference can be told apart.
            why = [(r.number, r.expected, r.got) for r in report.results if not r.passed]
            differing.append((seed, start.isoformat(), sorted(failed), report.error, why))
    assert differing == []
