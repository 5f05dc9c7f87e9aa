"""What `python -m labs check` says when it is asked for something that does not exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from labs.checking.extra import EXTRA_CHECKS
from labs.commands.cli import main
from labs.trees.finding import REPO_ROOT, TreeLoadError, load_tree
from tests.support.languages import LANGUAGES, english_left, worded

EXTRA_KEYS = [check.key for check in EXTRA_CHECKS]


def check_command(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m labs check ARGS` as a learner would."""
    return subprocess.run(
        [sys.executable, "-m", "labs", "check", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("key", ["9", "foo", "0"])
def test_an_unknown_only_key_lists_the_keys_that_exist(
    key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--only 9 exits 2 naming 1..6 and every extra check's key, noting they need --extra."""
    assert main(["check", "--tree", "solution", "--only", key]) == 2
    said = capsys.readouterr().err
    assert repr(key) in said and "1, 2, 3, 4, 5, 6" in said and "--extra" in said
    assert all(extra in said for extra in EXTRA_KEYS)


def test_an_extra_key_without_extra_says_to_add_it(capsys: pytest.CaptureFixture[str]) -> None:
    """An extra check's key alone runs nothing, so the command says --extra is needed."""
    assert main(["check", "--tree", "solution", "--only", EXTRA_KEYS[0]]) == 2
    said = capsys.readouterr().err
    assert EXTRA_KEYS[0] in said and "add --extra" in said


def test_an_extra_key_with_extra_runs_that_check() -> None:
    """With --extra the same key is accepted and its check runs."""
    done = check_command("--tree", "solution", "--extra", "--only", EXTRA_KEYS[0])
    assert EXTRA_CHECKS[0].title in done.stdout and not done.stderr


def test_the_help_lists_the_extra_checks_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """`check --help` names every key --only takes with --extra."""
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert all(key in shown.replace("- ", "-") for key in EXTRA_KEYS)


def test_a_tree_path_that_does_not_exist_is_called_missing(tmp_path: Path) -> None:
    """A typo in --tree says the folder does not exist, not that it lacks __init__.py."""
    with pytest.raises(TreeLoadError, match="does not exist") as raised:
        load_tree(str(tmp_path / "does-not-exist"))
    assert "__init__.py" not in str(raised.value)


def test_a_folder_without_init_is_still_called_not_a_lab_tree(tmp_path: Path) -> None:
    """An existing folder that is no package keeps the __init__.py message."""
    with pytest.raises(TreeLoadError, match=r"no __init__\.py"):
        load_tree(str(tmp_path))


def test_the_check_command_reports_a_missing_tree(tmp_path: Path) -> None:
    """The command prints the same reason and fails."""
    done = check_command("--tree", str(tmp_path / "nowhere"))
    assert done.returncode == 1 and "does not exist" in done.stdout


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("limit", ["0", "-3"])
def test_a_check_timeout_that_is_not_positive_is_refused(
    limit: str, language: str, speak: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """--check-timeout 0 exits 2 saying, in the language asked for, that it must be above 0,
    before running anything."""
    argv = ["--lang", language, "check", "--tree", "solution", "--check-timeout", limit]
    assert main(argv) == 2
    said = capsys.readouterr().err
    refusal = worded(language, "error: --check-timeout must be a number of seconds above 0")
    assert said.startswith(refusal) and not english_left(language, said)
