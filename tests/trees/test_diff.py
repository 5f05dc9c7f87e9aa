"""The instructor's diff: hunks under the check they serve, on a terminal and in a pipe."""

from __future__ import annotations

import subprocess
import sys

from labs.trees.diff import tree_diff
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import read_lines


def labs_command(*args: str) -> subprocess.CompletedProcess[str]:
    """Run python -m labs with arguments, output captured (so piped, not a terminal)."""
    return subprocess.run(
        [sys.executable, "-m", "labs", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_hunks_are_grouped_by_check_in_ascending_order() -> None:
    """The diff's keys are the served checks, ascending, and every hunk sits under its own."""
    diff = tree_diff()
    assert list(diff) == sorted(diff)
    assert all(hunk.check == check for check, hunks in diff.items() for hunk in hunks)


def test_each_hunk_points_at_its_todo_and_solution_markers() -> None:
    """starter_line and solution_line are the marker lines, carrying the hunk's instruction."""
    for hunks in tree_diff().values():
        for hunk in hunks:
            todo = read_lines(tree_root("starter") / hunk.path)[hunk.starter_line - 1]
            solved = read_lines(tree_root("solution") / hunk.path)[hunk.solution_line - 1]
            assert f"TODO(check {hunk.check})" in todo and hunk.instruction in todo
            assert f"SOLUTION(check {hunk.check})" in solved


def test_every_hunk_shows_what_the_learner_adds() -> None:
    """Each region's hunk has at least one line only the solution has."""
    assert all(hunk.added for hunks in tree_diff().values() for hunk in hunks)


def test_the_piped_diff_is_plain_text_under_check_headings() -> None:
    """Piped output has no colour codes and a heading per served check."""
    result = labs_command("diff")
    assert result.returncode == 0
    assert "\033[" not in result.stdout
    for check in tree_diff():
        assert f"check {check}:" in result.stdout


def test_colour_can_be_forced_for_a_pager() -> None:
    """--color always colours the added and removed lines."""
    assert "\033[32m" in labs_command("diff", "--color", "always").stdout


def test_stat_lists_files_and_changed_lines_per_check() -> None:
    """--stat names each file a check touches, with +added -removed."""
    output = labs_command("diff", "--stat").stdout
    for check, hunks in tree_diff().items():
        assert f"check {check}:" in output
        for hunk in hunks:
            assert hunk.path in output
    assert "lines" in output.splitlines()[-1]
