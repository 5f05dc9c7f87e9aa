"""Each classic learner mistake fails exactly the checks it should, under fresh seeds."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from labs.runner import run_checks
from tests.core.mistakes import MISTAKES, Mistake


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_classic_mistake_fails_exactly_its_checks_on_memory(
    mistake: Mistake, tmp_path: Path
) -> None:
    """The checks that fail are the mistake's, the others pass, the hints name TODO lines."""
    tree = mistake.apply(tmp_path)
    seed = secrets.randbelow(1_000_000)
    report = run_checks(str(tree), seed=seed)
    failed = {r.number for r in report.results if not r.passed}
    assert failed == set(mistake.fails), f"seed {seed}: " + "; ".join(
        f"{r.number}: {r.got}" for r in report.results if not r.passed
    )
    for result in report.results:
        if not result.passed:
            assert result.hint is not None
            line = Path(result.hint.path).read_text().splitlines()[result.hint.line - 1]
            assert f"(check {result.number})" in line


def test_a_race_mistake_is_caught_on_every_one_of_several_seeds(tmp_path: Path) -> None:
    """The forced thread switches make the check-then-insert race show on each run, not by luck."""
    (mistake,) = [m for m in MISTAKES if m.name == "check-then-insert-outside-the-lock"]
    tree = mistake.apply(tmp_path)
    for seed in range(4):
        report = run_checks(str(tree), seed=seed, only={"3"})
        assert [r.passed for r in report.results] == [False], f"seed {seed}"
