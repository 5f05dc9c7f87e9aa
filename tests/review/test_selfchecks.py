"""The six self-checks as a learner runs them: subprocesses, output, exit codes, JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labs.checking.extra import EXTRA_CHECKS
from labs.trees.finding import REPO_ROOT

CHECK_LINE = re.compile(r"^  (\d) (?:✓ PASS|✗ FAIL|PASS|FAIL)")
HINT_LINE = re.compile(r"hint:\s+(\S+):(\d+)")


def selftest(tree: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run MOCK=1 SELFTEST=1 python -m <tree> from the repository root."""
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    environ.update({"MOCK": "1", "SELFTEST": "1", "PYTHONIOENCODING": "utf-8", **env})
    return subprocess.run(
        [sys.executable, "-m", tree],
        cwd=REPO_ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def outcomes(stdout: str) -> dict[int, bool]:
    """Map check number to passed, from the human output."""
    found = {}
    for line in stdout.splitlines():
        match = CHECK_LINE.match(line)
        if match:
            found[int(match.group(1))] = "PASS" in line
    return found


@pytest.fixture(scope="module")
def starter_selftest(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The untouched starter's self-checks, run once (lab state of its own) for the tests that
    read them."""
    state = tmp_path_factory.mktemp("lab-state-starter")
    return selftest("starter", LAB_STATE_DIR=str(state), XDG_STATE_HOME=str(state / "xdg"))


def test_the_starter_as_shipped_passes_1_2_6_and_fails_3_4_5(
    starter_selftest: subprocess.CompletedProcess[str],
) -> None:
    """The untouched starter fails exactly the checks whose TODOs are unsolved."""
    result = starter_selftest
    assert outcomes(result.stdout) == {1: True, 2: True, 3: False, 4: False, 5: False, 6: True}
    assert result.stdout.splitlines()[-1] == "3 passed, 3 failed"
    assert result.returncode == 1
    assert "Traceback" not in result.stdout + result.stderr


def test_each_starter_failure_points_at_a_real_todo_line(
    starter_selftest: subprocess.CompletedProcess[str],
) -> None:
    """Every hint names a file:line whose line holds TODO(check N) for that check."""
    stdout = starter_selftest.stdout
    hints = HINT_LINE.findall(stdout)
    assert len(hints) == 3
    for (path, line), check in zip(hints, (3, 4, 5), strict=True):
        text = (REPO_ROOT / path).read_text().splitlines()[int(line) - 1]
        assert f"TODO(check {check})" in text


def test_the_solution_passes_all_six_and_exits_zero() -> None:
    """The reference tree is green."""
    result = selftest("solution")
    assert outcomes(result.stdout) == dict.fromkeys(range(1, 7), True)
    assert result.stdout.splitlines()[-1] == "6 passed, 0 failed"
    assert result.returncode == 0


def test_selftest_without_a_store_says_how_to_choose_one() -> None:
    """Neither MOCK=1 nor DATABASE_URL: one clear sentence naming both, exit 2."""
    result = selftest("solution", MOCK="")
    assert result.returncode == 2
    assert "MOCK=1" in result.stderr and "DATABASE_URL" in result.stderr


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_the_json_results_follow_exercism_v3(tree: str, tmp_path: Path) -> None:
    """--json writes version 3 with one entry per check and task_id = check number."""
    out = tmp_path / "results.json"
    subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", tree, "--json", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=120,
    )
    results = json.loads(out.read_text())
    assert set(results) <= {"version", "status", "message", "tests"}
    assert results["version"] == 3
    assert results["status"] == ("pass" if tree == "solution" else "fail")
    assert [t["task_id"] for t in results["tests"]] == [1, 2, 3, 4, 5, 6]
    for test in results["tests"]:
        assert set(test) == {"name", "status", "message", "output", "test_code", "task_id"}
        assert test["status"] in {"pass", "fail", "error"}
        assert test["test_code"] and "def " not in test["test_code"]  # what it does, not code
        assert (test["message"] is None) == (test["status"] == "pass")
        assert test["output"] is None or len(test["output"]) <= 500


def test_a_tree_that_does_not_import_fails_all_six_with_the_reason(tmp_path: Path) -> None:
    """A syntax error in a copy of the starter becomes six failures and a clear message."""
    import shutil

    copy = tmp_path / "broken"
    shutil.copytree(REPO_ROOT / "starter", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "shared" / "keys.py").write_text("def idempotency_key_for(:\n")
    out = tmp_path / "results.json"
    result = subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", str(copy), "--json", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1] == "0 passed, 6 failed"
    assert "SyntaxError" in result.stdout
    assert json.loads(out.read_text())["status"] == "error"


def test_trace_shows_the_replayed_duplicate_of_check_3() -> None:
    """--trace prints the arrows; each retry (with a clientMessageId, then without) is a replay."""
    result = subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", "solution", "--only", "3", "--trace"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    posts = [line for line in lines if line.startswith("client -> gateway POST /chat")]
    replays = [line for line in lines if line.startswith("gateway --> client [replay] 202")]
    bodies = [line.partition("POST /chat ")[2] for line in posts]
    assert len(posts) == 10 and bodies[0] == bodies[1] != bodies[2] and len(replays) == 2
    # The same text under another clientMessageId, then without one: a retry in the window.
    assert bodies[3] != bodies[0] and bodies[4] == bodies[5] and "clientMessageId" not in bodies[4]
    assert any(line.startswith("store --> gateway [replay]") for line in lines)
    assert result.stdout.splitlines()[-1] == "1 passed, 0 failed"


def test_the_extra_checks_pass_on_the_solution_and_catch_the_starter() -> None:
    """Races and the 409 are shown after the six and never counted in them."""

    def run(tree: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "labs", "check", "--tree", tree, "--extra"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )

    solution, starter = run("solution"), run("starter")
    assert "extra checks (not counted in the six):" in solution.stdout
    assert solution.stdout.count("+ ✓ PASS") == len(EXTRA_CHECKS) == 4
    assert solution.stdout.splitlines()[-1] == "6 passed, 0 failed"
    assert "+ ✗ FAIL  concurrent duplicates" in starter.stdout
    assert starter.stdout.splitlines()[-1] == "3 passed, 3 failed"


def test_the_readme_sample_output_points_at_a_real_todo_line() -> None:
    """The hint shown in the README's sample run is where the starter's marker really is."""
    readme = (REPO_ROOT / "README.md").read_text()
    (path, line), *_ = HINT_LINE.findall(readme)
    text = (REPO_ROOT / path).read_text().splitlines()[int(line) - 1]
    assert "TODO(check 3)" in text
