"""pytest --lab-tree PATH: one test per criterion, points, results.json, an honest exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from labs.grading.criteria import CRITERIA, MEMORY_POINTS, MIGRATION_POINTS
from labs.trees import REPO_ROOT, tree_root
from tests.grading import submissions as make


def grade_with_pytest(tree: Path, results: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run pytest --lab-tree on a tree, the way an instructor or GitHub Classroom would."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--lab-tree",
        str(tree),
        "--lab-results",
        str(results),
        "--lab-timeout",
        "5",
        *extra,
    ]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=180, check=False, env=env
    )


def test_the_untouched_starter_earns_exactly_checks_1_2_and_6(
    tmp_path: Path, typecheck_points: dict[str, int]
) -> None:
    """Grading starter/ gives the points of checks 1, 2, 6 plus the typecheck it earns."""
    results = tmp_path / "results.json"
    run = grade_with_pytest(tree_root("starter"), results)
    assert run.returncode == 0, run.stdout[-2000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["version"] == 3 and data["status"] == "fail"
    passed = {t["task_id"] for t in data["tests"] if t["status"] == "pass" and "task_id" in t}
    assert passed == {1, 2, 6}
    assert data["score"] == 3 * MEMORY_POINTS + typecheck_points["starter"]
    assert f"score: {data['score']} / {data['max_score']}" in run.stdout


def test_each_criterion_is_one_test_with_its_points(tmp_path: Path) -> None:
    """The run collects one test per criterion and results.json carries each one's points."""
    results = tmp_path / "results.json"
    run = grade_with_pytest(tree_root("starter"), results)
    assert f"collected {len(CRITERIA)} items" in run.stdout
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    graded = [c for c in CRITERIA if c.kind != "postgres"]
    assert [(t["name"], t["max_score"]) for t in tests] == [(c.title, c.points) for c in graded]
    assert "no database configured" in run.stdout


def test_a_solved_copy_with_its_migration_passes_the_checks(tmp_path: Path) -> None:
    """A fixed copy anywhere on disk, named anything, passes the six and the migration."""
    folder = make.fixed(tmp_path / "alice-hand-in")
    make.with_migration(folder / "starter")
    results = tmp_path / "results.json"
    run = grade_with_pytest(folder / "starter", results)
    assert run.returncode == 0, run.stdout[-2000:]
    tests = {t["name"]: t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}
    checks = [t for t in tests.values() if "task_id" in t]
    assert [t["status"] for t in checks] == ["pass"] * 6
    migration = next(c.title for c in CRITERIA if c.kind == "migration")
    assert tests[migration]["score"] == MIGRATION_POINTS


def test_a_grader_that_cannot_write_its_results_exits_non_zero(tmp_path: Path) -> None:
    """When grading itself fails (results.json unwritable), the exit code says so."""
    run = grade_with_pytest(tree_root("starter"), tmp_path / "missing" / "results.json")
    assert run.returncode != 0
