"""Grading a class: every kind of hand-in gets the score it earned, none stops the batch."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from labs.grading.criteria import MEMORY_POINTS, MIGRATION_POINTS, Grade
from labs.trees.finding import REPO_ROOT

pytestmark = pytest.mark.slow  # whole classes through labs grade


def memory_results(grade: Grade) -> dict[int, str]:
    """pass/fail of the six checks on memory."""
    return {n: grade.outcomes[f"memory-{n}"].status for n in range(1, 7)}


def passing(*checks: int) -> dict[int, str]:
    """The six checks' results when exactly these pass."""
    return {n: "pass" if n in checks else "fail" for n in range(1, 7)}


def test_the_solution_zip_earns_every_memory_point_and_the_migration(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """A starter with every region solved, zipped with its migration, earns all it can."""
    grade = batch["ada"]
    assert memory_results(grade) == passing(1, 2, 3, 4, 5, 6)
    assert grade.score == 6 * MEMORY_POINTS + MIGRATION_POINTS + typecheck_points["solution"]


def test_the_untouched_starter_earns_checks_1_2_and_6(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """The starter as shipped passes 1, 2 and 6, and has no migration of its own."""
    grade = batch["ben"]
    assert memory_results(grade) == passing(1, 2, 6)
    assert grade.outcomes["migration"].status == "fail"
    assert grade.score == 3 * MEMORY_POINTS + typecheck_points["starter"]
    assert grade.broken == ""


def test_a_half_fixed_starter_earns_the_check_it_fixed(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """Only check 4's region solved: 1, 2, 4 and 6 pass."""
    grade = batch["cho"]
    assert memory_results(grade) == passing(1, 2, 4, 6)
    assert grade.score == 4 * MEMORY_POINTS + typecheck_points["starter"]


def test_a_syntax_error_scores_zero_and_says_so(batch: dict[str, Grade]) -> None:
    """A tree that does not parse fails everything, with the SyntaxError as the note."""
    grade = batch["dev"]
    assert grade.score == 0
    assert "SyntaxError" in grade.broken and "keys.py" in grade.broken


def test_an_endless_loop_at_import_times_out_once(batch: dict[str, Grade]) -> None:
    """A tree that never finishes importing fails the six checks as timed out."""
    grade = batch["eli"]
    assert memory_results(grade) == passing()
    assert "did not finish importing" in grade.broken


def test_an_endless_loop_in_one_check_costs_only_that_check(batch: dict[str, Grade]) -> None:
    """A transition that never returns fails check 4 as timed out; the others are graded."""
    grade = batch["fay"]
    assert memory_results(grade) == passing(1, 2, 6)
    assert "still running after 10 s" in grade.outcomes["memory-4"].message
    assert "timed out" in grade.broken


def test_a_deleted_file_scores_zero_and_names_the_module(batch: dict[str, Grade]) -> None:
    """Without shared/keys.py the tree does not import; the note names what is missing."""
    grade = batch["gus"]
    assert grade.score == 0
    assert "shared.keys" in grade.broken
    assert "labtree_" not in grade.broken


def test_a_zip_that_does_not_unpack_is_reported(batch: dict[str, Grade]) -> None:
    """A cut-short upload scores zero with the reason, and the same max as the others."""
    grade = batch["hal"]
    assert grade.score == 0
    assert "does not unpack" in grade.broken
    assert grade.max_score == batch["ben"].max_score


def test_the_grade_command_prints_a_row_each_and_writes_csv_and_markdown(
    batch_folder: Path, tmp_path: Path
) -> None:
    """python -m labs grade exits 0 with one row per submission, even with broken ones."""
    sources = [str(batch_folder / name) for name in ("ben", "dev", "hal.zip")]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "labs",
            "grade",
            "--out",
            str(tmp_path),
            "--timeout",
            "10",
            *sources,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout.splitlines()
    assert [line.split()[0] for line in table[1:4]] == ["ben", "dev", "hal"]
    with (tmp_path / "grades.csv").open(encoding="utf-8-sig") as rows:
        graded = {row["submission"]: row for row in csv.DictReader(rows)}
    assert graded["ben"]["6"] == "pass" and graded["ben"]["3"] == "fail"
    assert graded["hal"]["score"] == "0"
    assert "| ben |" in (tmp_path / "grades.md").read_text(encoding="utf-8")
