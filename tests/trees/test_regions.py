"""The marked regions: parsed from the trees, and the solution applied to a starter copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.grading.isolate import check_outcomes
from labs.trees.finding import tree_root
from labs.trees.regions import RegionError, copy_tree, parse_regions, regions_in
from tests.support.solved import apply_solution


def test_every_starter_region_serves_a_check_and_opens_with_todo() -> None:
    """The starter's regions are TODOs, each serving one of checks 3, 4 and 5."""
    regions = regions_in(tree_root("starter"))
    assert regions
    assert {r.tag for r in regions} == {"TODO"}
    assert {r.check for r in regions} <= {1, 2, 3, 4, 5, 6}


def test_the_solution_has_as_many_regions_as_the_starter() -> None:
    """Each TODO region has a SOLUTION region serving the same check in the same file."""
    starter = [(r.path, r.check) for r in regions_in(tree_root("starter"))]
    solution = [(r.path, r.check) for r in regions_in(tree_root("solution"))]
    assert starter == solution


def test_applying_the_solution_to_a_starter_copy_gives_six_passes(tmp_path: Path) -> None:
    """Every TODO region filled with the solution's body makes all six checks pass."""
    copy = copy_tree(tree_root("starter"), tmp_path / "starter")
    applied = apply_solution(copy, tree_root("solution"))
    assert len(applied) == len(regions_in(tree_root("starter")))
    outcomes = check_outcomes(copy)
    assert {n: o.status for n, o in outcomes.items()} == {n: "pass" for n in range(1, 7)}


def test_applying_one_check_leaves_the_other_todos_as_shipped(tmp_path: Path) -> None:
    """Only the regions serving the chosen check change; the other TODO bodies stay naive."""
    copy = copy_tree(tree_root("starter"), tmp_path / "starter")
    apply_solution(copy, tree_root("solution"), {4})
    after = {(r.path, r.start): r.body_lines for r in regions_in(copy) if r.check != 4}
    before = {
        (r.path, r.start): r.body_lines for r in regions_in(tree_root("starter")) if r.check != 4
    }
    assert after == before


@pytest.mark.parametrize(
    ("lines", "line", "problem"),
    [
        (["# TODO(check 3): do it", "x = 1"], 1, "never closed"),
        (["x = 1", "# END(check 3)"], 2, "without"),
        (["    # TODO(check 3): do it", "# END(check 3)"], 2, "indentation"),
        (["# TODO(check 3): a", "# TODO(check 4): b", "# END(check 4)"], 2, "before"),
    ],
)
def test_a_broken_marker_is_reported_with_its_line(
    lines: list[str], line: int, problem: str
) -> None:
    """Unclosed, unopened, misindented or overlapping markers name the line at fault."""
    with pytest.raises(RegionError) as caught:
        parse_regions("shared/keys.py", lines)
    assert caught.value.line == line
    assert problem in caught.value.problem
