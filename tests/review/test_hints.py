"""Tiered hints: the idea, then where, then what, each pointing at the real TODO line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import wcwidth

from labs.checking.checks import CHECKS
from labs.review import hints, state, texts
from labs.term import i18n
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree, regions_in
from tests.support.solved import apply_solution

TITLES = {check.number: check.title for check in CHECKS}
MARKED = [3, 4, 5]  # the checks the starter fails, each with TODO regions
UNMARKED = [1, 2, 6]  # passed as shipped: the hints point at the files instead


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test remembers its hints in a state folder of its own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    return folder


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A learner's copy of the starter, with the current folder above it."""
    monkeypatch.chdir(tmp_path)
    return copy_tree(tree_root("starter"), tmp_path / "mine")


def hint(tree: Path, *args: str) -> str:
    """What `python -m labs hint ... --tree tree` prints; it must exit 0."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "hint", *args, "--tree", str(tree)],
        cwd=REPO_ROOT,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_each_call_reveals_the_next_tier_and_stops_at_the_last(tree: Path) -> None:
    """Four calls show tiers 1, 2, 3 and 3 again, each tier a different text."""
    shown = [hint(tree, "4") for _ in range(4)]
    for tier, text in zip((1, 2, 3, 3), shown, strict=True):
        assert f"check 4, hint {tier} of 3" in text
    assert len({text.split("\n\n")[1] for text in shown[:3]}) == 3
    assert "last hint for check 4" in shown[3]


def test_the_tiers_shown_are_remembered_per_tree(tree: Path, tmp_path: Path) -> None:
    """Hints asked for one tree do not advance another tree's."""
    other = copy_tree(tree_root("starter"), tmp_path / "other")
    hint(tree, "3")
    hint(tree, "3")
    assert "hint 1 of 3" in hint(other, "3")
    assert "hint 3 of 3" in hint(tree, "3")


def test_level_shows_that_tier_at_once(tree: Path) -> None:
    """--level 3 shows tier 3 without the first two."""
    assert "check 5, hint 3 of 3" in hint(tree, "5", "--level", "3")


@pytest.mark.parametrize("number", MARKED)
@pytest.mark.parametrize("tier", [1, 2, 3])
def test_every_tier_points_at_each_todo_line_of_its_check(
    tree: Path, number: int, tier: int
) -> None:
    """Each TODO(check N) of the tree appears as file:line, and that line holds the marker."""
    text = "\n".join(hints.hint_lines(tree, number, tier, TITLES[number]))
    regions = [r for r in regions_in(tree) if r.check == number]
    assert regions
    for region in regions:
        assert f"mine/{region.path}:{region.start}" in text
        line = (tree / region.path).read_text(encoding="utf-8").splitlines()[region.start - 1]
        assert f"TODO(check {number})" in line


@pytest.mark.parametrize("number", MARKED)
def test_the_hints_follow_the_marker_when_the_learner_adds_lines(tree: Path, number: int) -> None:
    """Lines added above a TODO move the line the hint names with it."""
    region = next(r for r in regions_in(tree) if r.check == number)
    path = tree / region.path
    path.write_text("# my notes\n# more notes\n" + path.read_text(encoding="utf-8"))
    text = "\n".join(hints.hint_lines(tree, number, 1, TITLES[number]))
    assert f"mine/{region.path}:{region.start + 2}" in text


@pytest.mark.parametrize("number", UNMARKED)
def test_checks_without_a_todo_point_at_the_code_they_test(tree: Path, number: int) -> None:
    """For checks 1, 2 and 6 each place named is a real line holding the code it names."""
    entry = texts.load("hints")["check"][str(number)]
    found = hints.places(tree, number)
    assert len(found) == len(entry["places"])
    for place, (relative, needle) in zip(found, entry["places"], strict=True):
        line = (tree / relative).read_text(encoding="utf-8").splitlines()[place.line - 1]
        assert needle in line


def test_a_deleted_marker_still_names_the_file_to_edit(tree: Path) -> None:
    """With the TODO(check 4) lines removed, the hint names shared/states.py and says why."""
    path = tree / "shared" / "states.py"
    kept = [line for line in path.read_text(encoding="utf-8").splitlines() if "check 4" not in line]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    text = "\n".join(hints.hint_lines(tree, 4, 2, TITLES[4]))
    assert "mine/shared/states.py:1" in text
    assert "marker is gone" in text


@pytest.mark.parametrize("number", range(1, 7))
def test_no_hint_gives_away_the_solutions_code(number: int) -> None:
    """No line of the solution's code for a check appears in any tier of its hints."""
    solution_lines = {
        line.strip()
        for region in regions_in(tree_root("solution"))
        if region.check == number
        for line in region.body_lines
        if len(line.strip()) > 12 and not line.strip().startswith("#")
    }
    entry = texts.load("hints")["check"][str(number)]
    said = " ".join(" ".join(entry[field].split()) for field in ("idea", "where", "what"))
    assert not [line for line in solution_lines if line in said]


def test_a_damaged_state_file_counts_as_no_hints_shown(tree: Path, own_state: Path) -> None:
    """A state file that is not JSON restarts the tiers instead of crashing."""
    state.state_dir().mkdir(parents=True)
    state.state_file().write_text("{not json", encoding="utf-8")
    assert "hint 1 of 3" in hint(tree, "3")
    assert state.state_file().is_relative_to(own_state)
    saved = json.loads(state.state_file().read_text(encoding="utf-8"))
    assert saved["hints"][str(tree.resolve())] == {"3": 1}


def test_an_unknown_check_number_is_refused_by_name() -> None:
    """hint 7 exits 2 and lists the valid choices."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "hint", "7"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "invalid choice: 7" in done.stderr


def test_without_a_number_the_hint_is_for_the_first_failing_check(tree: Path) -> None:
    """`labs hint` alone runs the checks and hints at 3; with 3 solved, at 4; tiers still count."""
    assert "check 3, hint 1 of 3" in hint(tree)
    assert "check 3, hint 2 of 3" in hint(tree)
    apply_solution(tree, tree_root("solution"), {3})
    assert "check 4, hint 1 of 3" in hint(tree)


def test_without_a_number_and_nothing_failing_no_hint_is_needed(tree: Path) -> None:
    """On a tree where all six pass, `labs hint` says no hint is needed, and exits 0."""
    apply_solution(tree, tree_root("solution"))
    said = hint(tree)
    assert "no hint needed" in said and "hint 1 of 3" not in said


def too_wide(lines: list[str], width: int) -> list[str]:
    """The lines wider than width columns, but for a lone word that cannot be cut (a path)."""
    return [
        line
        for line in lines
        if wcwidth.width(line) > width and len(line.split()) > 1 + line.startswith("  ")
    ]


@pytest.mark.parametrize("language", ["en", "zh_CN"])
@pytest.mark.parametrize("width", [80, 60])
def test_every_hint_line_fits_the_terminal_and_keeps_its_places_whole(
    tree: Path, language: str, width: int
) -> None:
    """Heading, prose, places and the last line all wrap at the width; no file:line is cut."""
    chosen = i18n.speak(language)
    try:
        for number, tier in [(n, t) for n in range(1, 7) for t in hints.TIERS]:
            text = "\n".join(hints.hint_lines(tree, number, tier, TITLES[number], width=width))
            lines = text.splitlines()
            assert too_wide(lines, width) == [], (number, tier)
            for place in hints.places(tree, number):
                assert f"{place.path}:{place.line}" in text
    finally:
        i18n.stop_speaking(chosen)


def test_labs_hint_wraps_at_the_terminals_columns(tree: Path) -> None:
    """COLUMNS=80: the command's heading and "edit here" lines wrap, the later ones hung."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "hint", "3", "--level", "2", "--tree", "mine"],
        cwd=tree.parent,  # the places read mine/..., as a learner beside the tree sees them
        env={**os.environ, "COLUMNS": "80"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert too_wide(lines, 80) == []
    edits = [i for i, line in enumerate(lines) if line.startswith("  edit here: mine/")]
    assert len(edits) == 3
    hang = " " * len("  edit here: ")
    assert all(lines[i + 1].startswith(hang) and lines[i + 1].strip() for i in edits)
