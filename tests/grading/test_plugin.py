"""Grading with pytest: one test per criterion, points, results.json, a configuration it pins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from labs.grading.criteria import CRITERIA, MEMORY_POINTS, MIGRATION_POINTS
from labs.pg.cluster import free_port
from labs.trees.finding import REPO_ROOT, tree_root
from tests.grading import submissions as make

MEMORY = ",".join(f"memory-{n}" for n in range(1, 7))
GRADING_COMMAND = [sys.executable, "-P", "-m", "labs.grading.pytest_main"]


def run(
    command: list[str], cwd: Path, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command as a grader would, with this checkout's lab kit, and DATABASE_URL only
    when one is given (Postgres then as LAB_POSTGRES says: the grader's own cluster here)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    if database_url:
        env["DATABASE_URL"] = database_url
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=240, check=False, env=env
    )


def grade_with_pytest(
    tree: Path | str,
    results: Path,
    *extra: str,
    cwd: Path = REPO_ROOT,
    database_url: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Grade a tree with the documented command, as an instructor or a grading platform would."""
    command = [*GRADING_COMMAND, "--lab-tree", str(tree), "--lab-results", str(results)]
    return run([*command, "--lab-timeout", "5", *extra], cwd, database_url)


def score_of(results: Path) -> int:
    """The score results.json records."""
    score: int = json.loads(results.read_text(encoding="utf-8"))["score"]
    return score


def test_the_untouched_starter_earns_exactly_checks_1_2_and_6(
    tmp_path: Path, typecheck_points: dict[str, int]
) -> None:
    """Grading starter/ gives the points of checks 1, 2, 6 plus the typecheck it earns."""
    results = tmp_path / "results.json"
    done = grade_with_pytest(tree_root("starter"), results)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads(results.read_text(encoding="utf-8"))
    assert data["version"] == 3 and data["status"] == "fail"
    passed = {t["task_id"] for t in data["tests"] if t["status"] == "pass" and "task_id" in t}
    assert passed == {1, 2, 6}
    assert data["score"] == 3 * MEMORY_POINTS + typecheck_points["starter"]
    assert f"total: {data['score']} / {data['max_score']}" in done.stdout
    assert f"collected {len(CRITERIA)} items" in done.stdout
    # On the grader's own Postgres (the server binaries are here): no migration, so none of
    # the six passes there, and each says why.
    assert [(t["name"], t["max_score"]) for t in data["tests"]] == [
        (c.title, c.points) for c in CRITERIA
    ]
    on_postgres = [t for t in data["tests"] if " on Postgres: " in t["name"]]
    assert len(on_postgres) == 6 and {t["status"] for t in on_postgres} == {"error"}
    assert all("no migration of the tree's own" in t["message"] for t in on_postgres)


def test_a_solved_copy_with_its_migration_passes_the_checks(tmp_path: Path) -> None:
    """A fixed copy anywhere on disk, named anything, passes the six and the migration."""
    folder = make.fixed(tmp_path / "alice-hand-in")
    make.with_migration(folder / "starter")
    results = tmp_path / "results.json"
    done = grade_with_pytest(folder / "starter", results, "--lab-only", f"{MEMORY},migration")
    assert done.returncode == 0, done.stdout[-2000:]
    tests = {t["name"]: t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]}
    checks = [t for t in tests.values() if "task_id" in t]
    assert [t["status"] for t in checks] == ["pass"] * 6
    migration = next(c.title for c in CRITERIA if c.kind == "migration")
    assert tests[migration]["score"] == MIGRATION_POINTS


def test_a_grader_that_cannot_write_its_results_exits_non_zero(tmp_path: Path) -> None:
    """When grading itself fails (results.json unwritable), the exit code says so."""
    done = grade_with_pytest(
        tree_root("starter"), tmp_path / "missing" / "results.json", "--lab-only", "memory-1"
    )
    assert done.returncode == 3


def test_a_bare_tree_name_means_the_folder_here_not_an_installed_package(tmp_path: Path) -> None:
    """`--lab-tree starter` grades ./starter: a solved copy here earns all six."""
    make.fixed(tmp_path / "repo")
    results = tmp_path / "results.json"
    done = grade_with_pytest("starter", results, "--lab-only", MEMORY, cwd=tmp_path / "repo")
    assert done.returncode == 0, done.stdout[-2000:]
    assert score_of(results) == 6 * MEMORY_POINTS


FORGING_CONFTEST = """
import json, pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"

def pytest_sessionfinish(session):
    for name in ("results.json",):
        with open(name, "w") as out:
            json.dump({"version": 3, "status": "pass", "score": 110, "max_score": 110}, out)
"""
# Written by the tree's __init__.py when it is imported into the grading pytest process.
SPY_INIT = """
import os as _os, sys as _sys
if "labs.grading.plugin" in _sys.modules:
    open(_os.path.join(_os.path.dirname(__file__), "..", "IMPORTED-BY-PYTEST"), "w").close()
"""
HOSTILE_SETTINGS = {
    "pytest.ini": "[pytest]\naddopts = -p no:lab_grading\n",
    "tox.ini": "[pytest]\naddopts = -p no:lab_grading\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p no:lab_grading\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p no:lab_grading"\n',
}


def hostile_repo(folder: Path, settings: str) -> Path:
    """A learner's repository: an unsolved starter plus settings and conftests that forge passes."""
    tree = make.starter_copy(folder)
    for place in (folder, tree):
        (place / settings).write_text(HOSTILE_SETTINGS[settings], encoding="utf-8")
        (place / "conftest.py").write_text(FORGING_CONFTEST, encoding="utf-8")
    with (tree / "__init__.py").open("a", encoding="utf-8") as init:
        init.write(SPY_INIT)
    return folder


@pytest.mark.parametrize("settings", sorted(HOSTILE_SETTINGS))
def test_the_trees_own_pytest_settings_and_conftest_never_reach_the_grader(
    tmp_path: Path, settings: str
) -> None:
    """A tree that switches the plugin off and forges passes gets its honest 30 of 60."""
    repo = hostile_repo(tmp_path / "repo", settings)
    results = tmp_path / "results.json"
    done = grade_with_pytest("starter", results, "--lab-only", MEMORY, cwd=repo)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert score_of(results) == 3 * MEMORY_POINTS
    assert "3 failed, 3 passed" in done.stdout
    assert not (repo / "IMPORTED-BY-PYTEST").exists()
    assert not (repo / "results.json").exists()


def test_plain_pytest_in_a_hostile_repository_refuses_rather_than_grades(tmp_path: Path) -> None:
    """`python -m pytest --lab-tree starter` there never reports a score: pytest stops early."""
    repo = hostile_repo(tmp_path / "repo", "pytest.ini")
    results = tmp_path / "results.json"
    done = run(
        [sys.executable, "-m", "pytest", "--lab-tree", "starter", "--lab-results", str(results)],
        repo,
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--lab-tree" in done.stderr
    assert not results.exists()


def test_plain_pytest_with_the_plugin_loaded_refuses_and_names_the_command(tmp_path: Path) -> None:
    """Without the pinned configuration the plugin itself refuses, naming the command to use."""
    make.starter_copy(tmp_path / "repo")
    results = tmp_path / "results.json"
    done = run(
        [sys.executable, "-m", "pytest", "--lab-tree", "starter", "--lab-results", str(results)],
        tmp_path / "repo",
    )
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "refusing to grade" in done.stderr
    assert "labs.grading.pytest_main" in done.stderr
    assert not results.exists()


@pytest.mark.parametrize(
    ("fail_under", "code"),
    [("30", 0), ("31", 1), ("50%", 0), ("50.1%", 1), ("0", 0)],
)
def test_fail_under_makes_the_exit_code_follow_the_score(
    tmp_path: Path, fail_under: str, code: int
) -> None:
    """The starter's 30 of 60 memory points pass a gate of 30 or 50% and fail anything above."""
    results = tmp_path / "results.json"
    done = grade_with_pytest(
        tree_root("starter"), results, "--lab-only", MEMORY, "--lab-fail-under", fail_under
    )
    assert done.returncode == code, done.stdout[-2000:]
    assert score_of(results) == 3 * MEMORY_POINTS
    assert f"--lab-fail-under {fail_under}" in done.stdout


def test_a_criterion_that_could_not_be_graded_never_meets_a_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Postgres criterion the machine could not grade (its server does not answer) earns
    nothing, so 100% fails."""
    monkeypatch.setenv("LAB_POSTGRES", "url")
    nothing_there = f"postgresql://koda:koda@127.0.0.1:{free_port()}/koda"
    results = tmp_path / "results.json"
    done = grade_with_pytest(
        tree_root("solution"),
        results,
        "--lab-only",
        "postgres-1",
        "--lab-fail-under",
        "100%",
        database_url=nothing_there,
    )
    assert done.returncode == 3, done.stdout[-2000:]  # not met, and the machine's failure
    assert "not graded" in done.stdout and "cannot connect to" in done.stdout


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--lab-fail-under", "lots"], "give points (60) or a percentage (60%)"),
        (["--lab-only", "memory-9"], "no criterion memory-9"),
    ],
    ids=["fail-under", "only"],
)
def test_a_bad_grading_option_is_refused_naming_it(
    tmp_path: Path, option: list[str], message: str
) -> None:
    """A typo in a grading option stops the run with a usage error that says what is wrong."""
    done = grade_with_pytest(tree_root("starter"), tmp_path / "results.json", *option)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert message in done.stderr


def test_a_missing_tree_is_refused_naming_the_path(tmp_path: Path) -> None:
    """A path that holds no tree is a usage error naming it, not a grade of zero."""
    done = grade_with_pytest("starter", tmp_path / "results.json", cwd=tmp_path)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert f"no lab tree at {tmp_path / 'starter'}" in done.stderr


def test_results_json_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    """A link planted where results.json goes (as at a predictable /tmp path) is replaced."""
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    results = tmp_path / "results.json"
    results.symlink_to(victim)
    done = grade_with_pytest(tree_root("starter"), results, "--lab-only", "memory-1")
    assert done.returncode == 0, done.stdout[-2000:]
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not results.is_symlink() and score_of(results) == MEMORY_POINTS
    assert results.stat().st_mode & 0o777 == 0o600
