"""What the lab remembers (hints, answers, backups) is kept per checkout, and away from tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labs.review import questions, state
from labs.trees.finding import REPO_ROOT


def test_every_test_keeps_lab_state_in_a_temporary_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The conftest points the state folder below pytest's own temporary folder, for every test."""
    base = tmp_path_factory.getbasetemp().resolve()
    assert state.state_home().resolve().is_relative_to(base)
    assert state.state_dir().resolve().is_relative_to(base)
    assert Path(os.environ["XDG_STATE_HOME"]).resolve().is_relative_to(base)


def test_a_command_a_test_starts_writes_nothing_in_the_home_folder(tmp_path: Path) -> None:
    """`labs hint` started the way tests start commands saves its tier in the test's folder."""
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "labs", "hint", "3"],
        cwd=REPO_ROOT,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert state.state_file().is_file()
    assert not list(home.iterdir())


def test_the_state_folder_is_named_after_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two checkouts, even with the same folder name, get two folders under the state home."""
    folders = set()
    for checkout in (Path("/one/mini-koda"), Path("/two/mini-koda")):
        monkeypatch.setattr(state, "checkout_root", lambda checkout=checkout: checkout)
        folder = state.state_dir()
        assert folder.parent == state.state_home() / "checkouts"
        assert folder.name.startswith("mini-koda-")
        folders.add(folder)
    assert len(folders) == 2


def checkout_copy(where: Path) -> Path:
    """A second checkout of the lab kit: its labs/ package copied into a folder of its own."""
    shutil.copytree(
        REPO_ROOT / "labs", where / "labs", ignore=shutil.ignore_patterns("__pycache__")
    )
    return where


def review(checkout: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m labs review ARGS` run from a checkout, with that checkout's own kit."""
    return subprocess.run(
        [sys.executable, "-m", "labs", "review", *args],
        cwd=checkout,
        env={**os.environ, "LAB_LANG": "en"},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_one_clones_answers_never_show_in_another(tmp_path: Path) -> None:
    """An answer marked in one checkout is listed there, and not in a second checkout's list."""
    first = checkout_copy(tmp_path / "first")
    second = checkout_copy(tmp_path / "second")
    answered = review(first, "split", stdin="my own answer\n\ng\n")
    assert answered.returncode == 0, answered.stderr
    mine = [line for line in review(first, "--list").stdout.splitlines() if "split" in line]
    theirs = [line for line in review(second, "--list").stdout.splitlines() if "split" in line]
    assert "got it" in mine[0]
    assert "got it" not in theirs[0] and "not marked yet" in theirs[0]


def test_the_shared_file_of_older_versions_is_named_and_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An older version's progress.json is not read or moved; hint and review say where it is."""
    old = state.state_home() / state.STATE_FILE
    old.parent.mkdir(parents=True, exist_ok=True)
    text = '{"review": {"split": {"answer": "another clone", "mark": "got"}}}\n'
    old.write_text(text, encoding="utf-8")
    assert "split" not in questions.saved_answers()
    assert str(old) in (state.legacy_notice() or "")
    done = review(REPO_ROOT, "--list")
    assert str(old) in done.stderr and "got it" not in done.stdout
    assert old.read_text(encoding="utf-8") == text
    questions.save("split", "mine", "partly")
    assert state.legacy_notice() is None  # this checkout has its own file now: said once is enough
