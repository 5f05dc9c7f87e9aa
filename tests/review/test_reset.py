"""Reset: one check's regions back to the starter as shipped, with a backup of what was there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from labs.review.reset import ResetError, reset_check, undo_reset
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree, regions_in, source_files
from tests.support.solved import apply_solution

STARTER = tree_root("starter")


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Backups go to a state folder of this test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    return folder


@pytest.fixture
def solved(tmp_path: Path) -> Path:
    """A learner's copy with every region solved, and a note added outside the regions."""
    tree = copy_tree(STARTER, tmp_path / "mine")
    apply_solution(tree, tree_root("solution"))
    keys = tree / "shared" / "keys.py"
    keys.write_text("# my own note, outside any region\n" + keys.read_text(encoding="utf-8"))
    return tree


def bodies(tree: Path, number: int) -> list[tuple[str, ...]]:
    """The bodies of the tree's regions for check N, in file order."""
    return [r.body_lines for r in regions_in(tree) if r.check == number]


@pytest.mark.parametrize("number", [3, 4, 5])
def test_reset_puts_back_only_that_checks_regions(solved: Path, number: int) -> None:
    """The check's regions read as shipped again; the other checks' stay solved."""
    others = {n: bodies(solved, n) for n in (3, 4, 5) if n != number}
    outcome = reset_check(solved, number)
    assert outcome.restored
    assert bodies(solved, number) == bodies(STARTER, number)
    assert {n: bodies(solved, n) for n in others} == others
    assert (solved / "shared" / "keys.py").read_text().startswith("# my own note")


def test_reset_keeps_a_backup_of_every_file_it_changed(solved: Path, own_state: Path) -> None:
    """The backup folder lies under the state folder and holds the solved files as they were."""
    before = {p: (solved / p).read_text() for p in source_files(solved)}
    outcome = reset_check(solved, 3)
    assert outcome.backup is not None and outcome.backup.is_relative_to(own_state)
    changed = {r.path for r in outcome.restored}
    assert changed == {"shared/keys.py", "shared/schema.py", "infra/memory.py"}
    for path in changed:
        assert (outcome.backup / path).read_text() == before[path]


def test_two_resets_in_one_second_keep_both_backups(solved: Path) -> None:
    """A second reset never overwrites the first one's backup."""
    first = reset_check(solved, 3).backup
    second = reset_check(solved, 4).backup
    assert first is not None and second is not None and first != second
    assert (first / "shared" / "keys.py").exists() and (second / "shared" / "states.py").exists()


def test_reset_of_a_tree_as_shipped_changes_nothing(tmp_path: Path) -> None:
    """Nothing to put back: no file is written and no backup is made."""
    tree = copy_tree(STARTER, tmp_path / "mine")
    outcome = reset_check(tree, 4)
    assert not outcome.restored and outcome.unchanged and outcome.backup is None


def test_reset_can_read_the_shipped_starter_from_git(solved: Path) -> None:
    """--from HEAD reads the starter out of git and puts the same text back."""
    outcome = reset_check(solved, 4, "HEAD")
    assert outcome.source.startswith("git HEAD:")
    assert bodies(solved, 4) == bodies(STARTER, 4)


def test_an_unknown_git_revision_is_named(solved: Path) -> None:
    """A revision git does not know is refused by name and nothing changes."""
    with pytest.raises(ResetError, match="no-such-rev"):
        reset_check(solved, 4, "no-such-rev")


def test_reset_refuses_the_solution_tree(tmp_path: Path) -> None:
    """A tree with SOLUTION markers is never overwritten with the starter's text."""
    tree = copy_tree(tree_root("solution"), tmp_path / "reference")
    before = (tree / "shared" / "states.py").read_text()
    with pytest.raises(ResetError, match="solution tree"):
        reset_check(tree, 4)
    assert (tree / "shared" / "states.py").read_text() == before


def test_missing_markers_are_named_and_nothing_changes(solved: Path) -> None:
    """With a region's END marker deleted, reset says which file and writes nothing."""
    states = solved / "shared" / "states.py"
    text = states.read_text().replace("# END(check 4)\n", "")
    states.write_text(text)
    keys_before = (solved / "shared" / "keys.py").read_text()
    with pytest.raises(ResetError, match=r"states\.py"):
        reset_check(solved, 4)
    assert states.read_text() == text
    assert (solved / "shared" / "keys.py").read_text() == keys_before


def test_the_command_says_what_it_restored_and_where_the_backup_is(solved: Path) -> None:
    """`python -m labs reset 5 --tree PATH` names each file:line and the backup folder."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "reset", "5", "--tree", str(solved)],
        cwd=REPO_ROOT,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "infra/memory.py:" in done.stdout and "shared/schema.py:" in done.stdout
    assert "saved in " + os.environ["LAB_STATE_DIR"] in done.stdout


@pytest.fixture
def kit_in_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kit whose starter is the tree being reset, committed as shipped in a git repository."""
    repo = tmp_path / "kit"
    starter = copy_tree(STARTER, repo / "starter")
    for command in (
        ["init", "-q"],
        ["add", "starter"],
        [
            "-c",
            "user.name=lab",
            "-c",
            "user.email=lab@example.invalid",
            "commit",
            "-qm",
            "as shipped",
        ],
    ):
        subprocess.run(["git", *command], cwd=repo, check=True, capture_output=True)
    monkeypatch.setattr("labs.review.reset.kit_starter", lambda: starter)
    return starter


def commit_all(repo: Path, message: str) -> None:
    """Commit every change in the repository."""
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=lab",
            "-c",
            "user.email=lab@example.invalid",
            "commit",
            "-qam",
            message,
        ],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_the_kits_own_starter_is_reset_from_git(kit_in_git: Path) -> None:
    """Edited in place and not committed, the kit's starter is read back from git HEAD."""
    shipped = bodies(kit_in_git, 4)
    apply_solution(kit_in_git, tree_root("solution"), {4})
    outcome = reset_check(kit_in_git, 4)
    assert outcome.source.startswith("git HEAD:starter/")
    assert bodies(kit_in_git, 4) == shipped


def test_committed_edits_are_reset_from_the_revision_given(kit_in_git: Path) -> None:
    """After committing the edits HEAD holds them; --from the first commit puts the text back."""
    shipped = bodies(kit_in_git, 4)
    first = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=kit_in_git, capture_output=True, text=True, check=True
    ).stdout.strip()
    apply_solution(kit_in_git, tree_root("solution"), {4})
    commit_all(kit_in_git.parent, "my allowlist")
    assert not reset_check(kit_in_git, 4).restored
    assert reset_check(kit_in_git, 4, first).restored
    assert bodies(kit_in_git, 4) == shipped


def files_of(tree: Path) -> dict[str, str]:
    """Every source file of the tree and its text."""
    return {p: (tree / p).read_text(encoding="utf-8") for p in source_files(tree)}


@pytest.mark.parametrize("number", [3, 4, 5])
def test_undo_puts_back_what_the_last_reset_replaced(solved: Path, number: int) -> None:
    """After reset N and undo N the tree is as it was before the reset, file for file."""
    before = files_of(solved)
    outcome = reset_check(solved, number)
    backup, files = undo_reset(solved, number)
    assert backup == outcome.backup
    assert set(files) == {region.path for region in outcome.restored}
    assert files_of(solved) == before


def test_undo_takes_the_last_reset_that_saved_a_backup(solved: Path) -> None:
    """A second reset that changed nothing leaves the first one's backup to undo."""
    before = files_of(solved)
    reset_check(solved, 4)
    assert not reset_check(solved, 4).restored
    undo_reset(solved, 4)
    assert files_of(solved) == before


def test_undo_with_nothing_to_undo_is_refused_and_changes_nothing(solved: Path) -> None:
    """No reset yet, a reset already undone, another check's reset: each is refused by name."""
    with pytest.raises(ResetError, match="no reset to undo"):
        undo_reset(solved, 3)
    reset_check(solved, 4)
    with pytest.raises(ResetError, match="check 3: no reset to undo"):
        undo_reset(solved, 3)
    undo_reset(solved, 4)
    after_undo = files_of(solved)
    with pytest.raises(ResetError, match="check 4: no reset to undo"):
        undo_reset(solved, 4)
    assert files_of(solved) == after_undo


def test_another_trees_reset_is_not_undone_here(solved: Path, tmp_path: Path) -> None:
    """The backup of a reset in one tree never comes back into another."""
    other = copy_tree(solved, tmp_path / "other")
    reset_check(solved, 4)
    with pytest.raises(ResetError, match="no reset to undo"):
        undo_reset(other, 4)


def test_undo_is_refused_when_a_file_changed_since_the_reset(solved: Path) -> None:
    """An edit made after the reset is never overwritten: undo names the file and stops."""
    outcome = reset_check(solved, 3)
    keys = solved / "shared" / "keys.py"
    edited = keys.read_text(encoding="utf-8") + "# my new attempt\n"
    keys.write_text(edited, encoding="utf-8")
    after_edit = files_of(solved)
    with pytest.raises(ResetError, match=r"shared/keys\.py changed since the reset") as refused:
        undo_reset(solved, 3)
    assert str(outcome.backup) in str(refused.value)
    assert files_of(solved) == after_edit


def reset_command(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m labs reset ARGS --tree tree`, as a learner runs it."""
    return subprocess.run(
        [sys.executable, "-m", "labs", "reset", *args, "--tree", str(tree)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_command_undoes_and_says_how_and_refuses_clearly(solved: Path) -> None:
    """reset prints the undo command; --undo names the files; a second --undo exits 2."""
    before = files_of(solved)
    done = reset_command(solved, "4")
    assert f"python -m labs reset 4 --undo --tree {solved}" in done.stdout
    undone = reset_command(solved, "4", "--undo")
    assert undone.returncode == 0, undone.stderr
    assert "shared/states.py" in undone.stdout and files_of(solved) == before
    again = reset_command(solved, "4", "--undo")
    assert again.returncode == 2 and "no reset to undo" in again.stderr
