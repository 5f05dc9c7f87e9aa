"""The drift guard: the trees differ only inside the marked regions."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labs.grading.drift import behaviour_drift
from labs.trees.drift import tree_drift
from labs.trees.finding import REPO_ROOT, tree_root


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of starter and solution that a test may break."""
    ignore = shutil.ignore_patterns("__pycache__")
    starter = Path(shutil.copytree(tree_root("starter"), tmp_path / "starter", ignore=ignore))
    solution = Path(shutil.copytree(tree_root("solution"), tmp_path / "solution", ignore=ignore))
    return starter, solution


def edit(path: Path, old: str, new: str) -> None:
    """Change one line of a copied tree."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_shipped_trees_have_no_drift() -> None:
    """starter/ and solution/ agree everywhere outside their regions."""
    report = tree_drift()
    assert report.drift == []


def test_the_starter_fails_exactly_the_checks_its_regions_serve() -> None:
    """The starter fails 3, 4 and 5 (the checks with TODOs) and the solution passes six."""
    assert behaviour_drift() == []


def test_a_solution_change_outside_a_region_names_file_and_line(trees: tuple[Path, Path]) -> None:
    """Editing the solution's keys.py outside its region is drift at that very line."""
    starter, solution = trees
    keys = solution / "shared" / "keys.py"
    edit(keys, "TIME_BUCKET_SECONDS = 60", "TIME_BUCKET_SECONDS = 90")
    line = keys.read_text(encoding="utf-8").splitlines().index("TIME_BUCKET_SECONDS = 90") + 1
    drift = tree_drift(starter, solution).drift
    assert [d.where for d in drift] == [f"solution/shared/keys.py:{line}"]
    assert "TIME_BUCKET_SECONDS = 90" in drift[0].problem


def test_a_change_inside_a_region_is_not_drift(trees: tuple[Path, Path]) -> None:
    """The solution's regions are free to change: that is what they are for."""
    starter, solution = trees
    edit(solution / "shared" / "keys.py", "bucket = int(", "bucket  = int(")
    assert tree_drift(starter, solution).ok


def test_a_todo_without_its_solution_is_drift(trees: tuple[Path, Path]) -> None:
    """Removing a SOLUTION region's markers leaves the starter's TODO without a partner."""
    starter, solution = trees
    memory = solution / "infra" / "memory.py"
    text = memory.read_text(encoding="utf-8")
    opener = next(line for line in text.splitlines() if "SOLUTION(check 5)" in line)
    edit(memory, opener + "\n", "")
    edit(memory, "# END(check 5)\n", "\n")
    drift = tree_drift(starter, solution).drift
    assert drift and all("infra/memory.py" in d.where for d in drift)


def test_a_file_in_one_tree_only_is_drift_but_caches_are_not(trees: tuple[Path, Path]) -> None:
    """A new module in the solution is drift; a __pycache__ folder is ignored."""
    starter, solution = trees
    (solution / "__pycache__").mkdir(exist_ok=True)
    (solution / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert tree_drift(starter, solution).ok
    (solution / "shared" / "retry.py").write_text("LIMIT = 3\n", encoding="utf-8")
    assert [d.where for d in tree_drift(starter, solution).drift] == ["solution/shared/retry.py:1"]


def test_the_drift_command_fails_on_drift_and_says_where(trees: tuple[Path, Path]) -> None:
    """python -m labs drift exits 1 and prints file:line; 0 on the shipped trees."""
    starter, solution = trees
    edit(solution / "worker" / "queries.py", '"""', '"""Edited. ')
    command = [sys.executable, "-m", "labs", "drift", "--no-checks"]
    broken = subprocess.run(
        [*command, "--starter", str(starter), "--solution", str(solution)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert broken.returncode == 1
    assert "solution/worker/queries.py:1" in broken.stdout
    clean = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert clean.returncode == 0, clean.stdout
