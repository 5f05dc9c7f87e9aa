"""The code's own bars: mypy strict on the trees (no explicit Any), mypy on the kit and its
tests, ruff."""

from __future__ import annotations

import subprocess
import sys

from labs.trees.finding import REPO_ROOT


def run(*command: str) -> subprocess.CompletedProcess[str]:
    """Run a command from the repository root and capture what it says."""
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)


def test_both_trees_typecheck_strictly_with_no_explicit_any() -> None:
    """`python -m labs typecheck` is the learner's acceptance criterion 5; both trees pass it."""
    result = run(sys.executable, "-m", "labs", "typecheck")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout


def test_the_lab_kit_the_dashboard_and_the_tests_typecheck() -> None:
    """labs/, web/ and tests/ pass mypy with the project's settings."""
    result = run(sys.executable, "-m", "mypy", "labs", "web", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_ruff_clean_and_formatted() -> None:
    """ruff check . finds nothing and ruff format would change nothing."""
    for command in (("check", "."), ("format", "--check", ".")):
        result = run(sys.executable, "-m", "ruff", *command)
        assert result.returncode == 0, result.stdout + result.stderr


def test_the_grading_extra_has_every_plugin_the_pytest_settings_need() -> None:
    """`pip install -e '.[grading]'` is enough for pytest to read this project's settings."""
    import tomllib

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    grading = " ".join(project["project"]["optional-dependencies"]["grading"])
    settings = project["tool"]["pytest"]["ini_options"]
    assert "pytest>=" in grading
    if "timeout" in settings:
        assert "pytest-timeout" in grading
