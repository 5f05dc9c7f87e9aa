"""`labs doctor` on the installation: each item's verdict, with the thing there and without it.

"Without it" is a real absence to the import system: the doctor runs in a
fresh interpreter in which the module cannot be imported (sys.modules holds
None for it, as for a module that failed to import), or with CHROMIUM naming
a path where there is none.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labs.doctor import environment
from labs.doctor.environment import pinned_versions
from labs.trees.finding import REPO_ROOT

# Runs `python -m labs doctor ARGS` after making the modules named in argv[1] unimportable.
WITHOUT = (
    "import sys\n"
    "sys.modules.update(dict.fromkeys(m for m in sys.argv[1].split(',') if m))\n"
    "from labs.commands.cli import main\n"
    "raise SystemExit(main(['doctor', *sys.argv[2:]]))\n"
)


def doctor(
    *args: str, without: tuple[str, ...] = (), env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the doctor with no DATABASE_URL, some modules absent, and env's variables set."""
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, ",".join(without), *args],
        cwd=REPO_ROOT,
        env={**environ, "LAB_LANG": "en", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def verdicts(output: str) -> dict[str, str]:
    """Each line's text by its verdict word (the first line with that text wins)."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        word, _spaces, text = line.partition(" ")
        found.setdefault(text.strip(), word)
    return found


def line_with(output: str, words: str) -> str:
    """The one line that says words."""
    (line,) = [line for line in output.splitlines() if words in line]
    return line


def test_a_complete_install_has_nothing_to_fix() -> None:
    """Here (the dev install, no DATABASE_URL) every item is ok or said for the record: exit 0."""
    done = doctor()
    assert done.returncode == 0, done.stdout + done.stderr
    assert line_with(done.stdout, "mypy and the type stubs").startswith("ok")
    assert line_with(done.stdout, "grading install").startswith("ok")
    assert line_with(done.stdout, "DATABASE_URL is not set").startswith("info")


@pytest.mark.parametrize(
    ("absent", "says"),
    [
        (("psycopg2-stubs",), "python -m pip install types-psycopg2"),
        (("mypy",), "mypy is not installed"),
        (("pytest",), "the grading install is missing pytest:"),
        (("pytest_timeout",), "the grading install is missing pytest-timeout:"),
    ],
    ids=["no-stubs", "no-mypy", "no-pytest", "no-pytest-timeout"],
)
def test_what_a_command_needs_and_is_missing_is_a_fix_with_its_command(
    absent: tuple[str, ...], says: str
) -> None:
    """Without the stubs, mypy or the grading extra: a "fix" line naming the install, exit 1."""
    done = doctor(without=absent)
    assert done.returncode == 1, done.stdout + done.stderr
    assert line_with(done.stdout, says).startswith("fix")
    if "grading" in says:
        assert "'.[grading]'" in line_with(done.stdout, says)


def test_without_chromium_the_pictures_are_a_warning_not_a_failure() -> None:
    """Chromium serves the pictures only: its absence warns and names the package."""
    done = doctor(env={"CHROMIUM": "/nowhere/chromium"})
    assert done.returncode == 0, done.stdout
    assert line_with(done.stdout, "no Chromium at /nowhere/chromium").startswith("warn")


def test_without_server_binaries_the_migration_criterion_is_said_not_graded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No PostgreSQL binaries: a warning that says what goes ungraded, and how to install them."""
    monkeypatch.setattr(environment, "find_bindir", lambda: None)
    finding = environment.server_binaries()
    assert finding.verdict == "warn"
    assert "migration criterion is not graded" in finding.text
    assert "apt-get install postgresql" in finding.text


def test_versions_that_differ_from_the_grading_pins_are_named(tmp_path: Path) -> None:
    """Each pin that differs from what is installed is named with both versions; none: ok."""
    pytest_version = importlib.metadata.version("pytest")
    pins = tmp_path / "constraints.txt"
    pins.write_text(f"# pins\npytest=={pytest_version}\nmypy==0.0.1\n", encoding="utf-8")
    finding = pinned_versions(pins)
    assert finding is not None and finding.verdict == "warn"
    assert f"mypy {importlib.metadata.version('mypy')} ≠ 0.0.1" in finding.text
    assert "pytest" not in finding.text.split("(")[1].split(")")[0]
    pins.write_text(f"pytest=={pytest_version}\n", encoding="utf-8")
    matching = pinned_versions(pins)
    assert matching is not None and matching.verdict == "ok"
    assert pinned_versions(tmp_path / "none.txt") is None


def test_every_line_reads_in_chinese() -> None:
    """With --lang zh each verdict and each sentence comes from the catalog."""
    done = doctor("--lang", "zh", env={"CHROMIUM": "/nowhere/chromium"})
    words = {"正常", "修复", "警告", "说明"}
    lines = done.stdout.splitlines()
    assert lines and all(line.split()[0] in words for line in lines), done.stdout
    english = ("installed", "missing", "not set", "Chromium at", "works")
    assert not [line for line in lines if any(word in line for word in english)]
