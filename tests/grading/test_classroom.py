"""The GitHub Classroom workflow: one step per criterion, and the points come out right."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from labs.grading.classroom import (
    COMMAND_GRADER,
    KIT_PATH,
    PINNED_REF,
    REPORTER,
    WORKFLOW_PATH,
    classroom_workflow,
    step_id,
)
from labs.grading.criteria import CRITERIA
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.grading.mistakes import migrations as variant

WORKFLOW = REPO_ROOT / WORKFLOW_PATH


def workflow() -> dict[Any, Any]:
    """The shipped workflow, parsed."""
    parsed: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return parsed


def job() -> dict[str, Any]:
    """The one job Classroom reads results from."""
    jobs = workflow()["jobs"]
    assert list(jobs) == ["run-autograding-tests"]
    found: dict[str, Any] = jobs["run-autograding-tests"]
    return found


def grader_steps() -> list[dict[str, Any]]:
    """The command-grader steps, in order."""
    return [step for step in job()["steps"] if step.get("uses") == COMMAND_GRADER]


def test_the_shipped_workflow_is_the_one_the_kit_generates() -> None:
    """.github/workflows/classroom.yml matches the criteria (regenerate it when they change)."""
    assert WORKFLOW.read_text(encoding="utf-8") == classroom_workflow()


def test_the_workflow_keeps_the_autograding_conventions() -> None:
    """Named as Classroom expects, one job, one step per criterion, then the reporter."""
    assert workflow()["name"] == "Autograding Tests"
    steps = grader_steps()
    assert [step["with"]["max-score"] for step in steps] == [c.points for c in CRITERIA]
    assert [step["id"] for step in steps] == [step_id(c) for c in CRITERIA]
    for step, criterion in zip(steps, CRITERIA, strict=True):
        assert step["with"]["test-name"] == criterion.title
        assert step["with"]["timeout"] > 0
        assert shlex.split(step["with"]["command"])[-7:-3] == [
            "--lab-only",
            criterion.key,
            "--lab-fail-under",
            "100%",
        ]
    reporter = job()["steps"][-1]
    assert reporter["uses"] == REPORTER
    ids = [step["id"] for step in steps]
    assert reporter["with"]["runners"] == ",".join(ids)
    assert reporter["env"] == {
        f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids
    }


def test_the_kit_comes_from_a_pinned_commit_not_the_learners_copy() -> None:
    """The kit is checked out at a full commit hash into its own folder and installed from there."""
    checkouts = [s for s in job()["steps"] if s.get("uses", "").startswith("actions/checkout")]
    kit = next(s for s in checkouts if "repository" in s.get("with", {}))
    assert PINNED_REF.fullmatch(kit["with"]["ref"])
    assert kit["with"]["path"] == KIT_PATH
    installs = [s["run"] for s in job()["steps"] if "pip install" in s.get("run", "")]
    constraints = f"./{KIT_PATH}/labs/grading/constraints.txt"
    assert installs == [f"python -m pip install -c '{constraints}' -e './{KIT_PATH}[grading]'"]
    for step in grader_steps():
        assert shlex.split(step["with"]["command"])[:3] == ["python", "-P", "-m"]


def test_the_database_criteria_have_a_postgres_service() -> None:
    """A Postgres service container, and DATABASE_URL pointing at it for every step."""
    postgres = job()["services"]["postgres"]
    assert postgres["image"].startswith("postgres:")
    user, password = postgres["env"]["POSTGRES_USER"], postgres["env"]["POSTGRES_PASSWORD"]
    assert job()["env"]["DATABASE_URL"].startswith(f"postgresql://{user}:{password}@localhost:")


@pytest.mark.parametrize(
    ("bad", "message"),
    [({"ref": "main"}, "full commit hash"), ({"repository": "not a repo"}, "owner/name")],
)
def test_the_workflow_refuses_an_unpinned_kit(bad: dict[str, str], message: str) -> None:
    """A branch name or a malformed repository is refused before any workflow is written."""
    with pytest.raises(ValueError, match=message):
        classroom_workflow(**bad)


def learner_repository(folder: Path, solved: bool) -> Path:
    """A learner's repository: the starter (spliced with the solution if solved) and a migration."""
    if solved:
        make.fixed(folder)
        variant.place(folder / "starter", variant.reference())
    else:
        make.starter_copy(folder)
    return folder


def run_step(step: dict[str, Any], repository: Path, database_url: str) -> int:
    """Run one grader step's command as the runner would, with this checkout as the kit."""
    command = shlex.split(step["with"]["command"])
    assert command[0] == "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env |= {"PYTHONPATH": str(REPO_ROOT), "DATABASE_URL": database_url}
    done = subprocess.run(
        [sys.executable, *command[1:]],
        cwd=repository,
        env=env,
        capture_output=True,
        text=True,
        timeout=step["with"]["timeout"] * 60,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    return done.returncode


@pytest.mark.parametrize("solved", [True, False], ids=["solved", "unsolved"])
def test_each_step_awards_its_points_exactly_when_the_criterion_passes(
    tmp_path: Path, fresh_database: str, typecheck_points: dict[str, int], solved: bool
) -> None:
    """A solved tree earns every step; the plain starter checks 1, 2, 6 and the typecheck."""
    repository = learner_repository(tmp_path / "learner", solved)
    earned = {
        step["id"]: step["with"]["max-score"]
        for step in grader_steps()
        if run_step(step, repository, fresh_database) == 0
    }
    if solved:
        expected = {step_id(c): c.points for c in CRITERIA}
    else:
        expected = {f"memory{n}": 10 for n in (1, 2, 6)}
        if typecheck_points["starter"]:
            expected["typecheck"] = typecheck_points["starter"]
    assert earned == expected
