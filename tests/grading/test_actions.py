"""The plain GitHub Actions workflow: one job grades the repository it runs in.

The workflow is parsed and its commands are run in order, as the runner runs
them: as an unprivileged user with passwordless sudo, in a workspace holding
`submission/` and `kit/`, with the job's token and the runner's variables
(GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_STEP_SUMMARY) in its environment. The
kit is installed once by the workflow's own install step; each of the
solved, unsolved and attacking checkouts is then graded by the grading step
and judged by the last one.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from labs.commands.release import write_release
from labs.grading.actions import (
    CHECKOUT,
    DATABASE_URL,
    KIT_PATH,
    KIT_VENV,
    PINNED_REF,
    RESULTS,
    SETUP_PYTHON,
    SUBMISSION,
    UPLOAD,
    WORKFLOW_PATH,
    grading_workflow,
)
from labs.grading.criteria import CRITERIA
from labs.pg.cluster import TempCluster
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from tests.grading.checkouts import TREES, learner_checkout, unsolved_earned
from tests.grading.conftest import sandbox_reachable_database
from tests.support.modes import Runner, SudoMissingError, give_to, sudo_runner

pytestmark = pytest.mark.slow  # the workflow's commands, run as a user with sudo

WORKFLOW = REPO_ROOT / WORKFLOW_PATH
TOKEN = "ghs_" + "0123456789abcdef" * 2  # the job's GITHUB_TOKEN in this test


def job() -> dict[str, Any]:
    """The workflow's one job."""
    jobs = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]
    assert list(jobs) == ["grade"]
    found: dict[str, Any] = jobs["grade"]
    return found


def step(name: str) -> dict[str, Any]:
    """The job's step whose name starts with name."""
    return next(s for s in job()["steps"] if s["name"].startswith(name))


def test_the_shipped_workflow_is_the_one_the_kit_generates() -> None:
    """.github/workflows/grade.yml is grading_workflow()'s text; no Classroom workflow is left."""
    assert WORKFLOW.read_text(encoding="utf-8") == grading_workflow()
    assert sorted(p.name for p in WORKFLOW.parent.iterdir()) == ["grade.yml"]


def test_one_job_current_actions_and_no_classroom_reporter() -> None:
    """checkout@v5, setup-python@v6, upload-artifact; nothing of GitHub Classroom's."""
    uses = [s["uses"] for s in job()["steps"] if "uses" in s]
    assert set(uses) == {CHECKOUT, SETUP_PYTHON, UPLOAD}
    assert CHECKOUT == "actions/checkout@v5" and SETUP_PYTHON == "actions/setup-python@v6"
    assert "classroom" not in WORKFLOW.read_text(encoding="utf-8").lower()
    checkouts = [s for s in job()["steps"] if s.get("uses") == CHECKOUT]
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)
    kit = next(s for s in checkouts if "repository" in s["with"])
    assert PINNED_REF.fullmatch(kit["with"]["ref"]) and kit["with"]["path"] == KIT_PATH


def test_the_points_go_to_the_summary_and_the_files_to_an_artifact() -> None:
    """$GITHUB_STEP_SUMMARY gets the table; results.json and junit.xml are uploaded, always."""
    assert '>> "$GITHUB_STEP_SUMMARY"' in step("Grade")["run"]
    upload = step("Keep")
    assert upload["if"] == "always()"
    assert upload["with"]["path"].splitlines() == [
        "${{ runner.temp }}/grade/results.json",
        "${{ runner.temp }}/grade/junit.xml",
    ]


def test_every_python_the_job_runs_is_isolated() -> None:
    """Each Python command of the job runs with -I: nothing of the learner's on its path."""
    runs = [line for s in job()["steps"] for line in s.get("run", "").splitlines()]
    pythons = [line for line in runs if "python" in line]
    assert pythons
    for line in pythons:
        words = shlex.split(line.replace("$(command -v python)", "python"))
        for i, word in enumerate(words):
            if word == "python" or word.endswith("/bin/python"):
                assert words[i + 1] == "-I", line


@dataclass
class Job:
    """The runner of these tests: the sudo user, and where the workflow's paths point here."""

    run: Runner
    scratch: Path
    database_url: str

    def localized(self, command: str) -> str:
        """The workflow's command with its fixed places moved to this test's own."""
        return (
            command.replace(KIT_VENV, str(self.scratch / "lab-kit"))
            .replace(RESULTS, str(self.scratch / "results"))
            .replace(DATABASE_URL, shlex.quote(self.database_url))
        )

    def step(self, command: str, workspace: Path, env: dict[str, str]) -> Any:
        """Run one of the workflow's commands in the workspace, as the runner's shell would."""
        # setup-python puts its interpreter first on PATH: here, this test's.
        path = f"{os.path.dirname(sys.executable)}:{self.run.path}"
        return self.run.run(
            [
                "/bin/bash",
                "--noprofile",
                "--norc",
                "-eo",
                "pipefail",
                "-c",
                self.localized(command),
            ],
            cwd=workspace,
            env={**env, "PATH": path, "GITHUB_WORKSPACE": str(workspace)},
            timeout=900,
            no_new_privs=False,
        )


@pytest.fixture(scope="module")
def actions_job(pg_cluster: TempCluster) -> Iterator[Job]:
    """The sudo user, and the kit installed by the workflow's own install step."""
    with contextlib.ExitStack() as stack:
        try:
            run = stack.enter_context(sudo_runner())
        except SudoMissingError as error:
            if os.environ.get("CI"):
                pytest.fail(f"CI must run the GitHub Actions workflow test: {error}")
            pytest.skip(str(error))
        url = stack.enter_context(sandbox_reachable_database(pg_cluster))
        scratch = Path(tempfile.mkdtemp(prefix="lab-actions-"))
        stack.callback(remove_tree, scratch)
        os.chmod(scratch, 0o755)
        workspace = scratch / "install-workspace"
        write_release(workspace / KIT_PATH)
        give_to(workspace, run.uid)
        runner = Job(run, scratch, url)
        done = runner.step(step("Install the lab kit")["run"], workspace, {})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield runner


@dataclass
class Graded:
    """One checkout through the job: the last step's exit, the summary, the artifact's files."""

    verdict: int
    summary: str
    results: dict[str, Any]
    junit: ET.Element
    log: str


@pytest.fixture(scope="module")
def graded(actions_job: Job) -> dict[str, Graded]:
    """Each checkout through the grading step and the verdict step, in a fresh workspace."""
    found = {}
    report = actions_job.scratch / "reports" / "imported.txt"
    report.parent.mkdir(mode=0o777)
    os.chmod(report.parent, 0o777)
    for tree in TREES:
        workspace = actions_job.scratch / f"workspace-{tree}"
        learner_checkout(tree, workspace / SUBMISSION, report)
        temp = workspace.parent / f"runner-temp-{tree}"
        temp.mkdir()
        summary = temp / "step-summary.md"
        summary.write_text("", encoding="utf-8")
        give_to(workspace, actions_job.run.uid)
        give_to(temp, actions_job.run.uid)
        env = {"GITHUB_TOKEN": TOKEN, "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(summary)}
        grading = actions_job.step(step("Grade")["run"], workspace, env)
        assert grading.returncode == 0, grading.stdout[-3000:] + grading.stderr[-3000:]
        verdict = actions_job.step(step("Every criterion passed")["run"], workspace, env)
        found[tree] = Graded(
            verdict.returncode,
            summary.read_text(encoding="utf-8"),
            json.loads((temp / "grade" / "results.json").read_text(encoding="utf-8")),
            ET.parse(temp / "grade" / "junit.xml").getroot(),
            grading.stdout + grading.stderr,
        )
    imported = report.read_text(encoding="utf-8") if report.exists() else ""
    assert "uid 0" not in imported, imported
    return found


def test_each_checkout_gets_its_honest_points_in_the_summary(graded: dict[str, Graded]) -> None:
    """Solved: all 110 and a green job; unsolved and attacking: the same 40, and a red one."""
    passed = {
        tree: {t["name"] for t in g.results["tests"] if t["status"] == "pass"}
        for tree, g in graded.items()
    }
    assert passed["solved"] == {c.title for c in CRITERIA}
    assert passed["unsolved"] == unsolved_earned()
    assert passed["attacking"] == passed["unsolved"]
    assert [graded[t].verdict for t in TREES] == [0, 1, 1]
    for g in graded.values():
        assert all(c.title in g.summary for c in CRITERIA)
        assert f"**{g.results['score']} / {g.results['max_score']}**" in g.summary
        assert TOKEN not in g.summary + g.log


def test_the_artifact_holds_results_json_and_junit_xml(graded: dict[str, Graded]) -> None:
    """results.json has every criterion; junit.xml a test case per criterion, failures marked."""
    for g in graded.values():
        assert [t["name"] for t in g.results["tests"]] == [c.title for c in CRITERIA]
        cases = g.junit.iter("testcase")
        failures = [case for case in cases if case.find("failure") is not None]
        failing = [t for t in g.results["tests"] if t["status"] != "pass"]
        assert len(failures) == len(failing)
        assert len(list(g.junit.iter("testcase"))) == len(CRITERIA)


def test_each_run_grades_into_a_folder_of_its_own(
    actions_job: Job, graded: dict[str, Graded]
) -> None:
    """Three jobs on one runner, three results folders: a kept runner never mixes two grades."""
    folders = [p for p in (actions_job.scratch / "results").iterdir() if p.is_dir()]
    assert len(folders) == len(graded)
    shutil.rmtree(actions_job.scratch / "results", ignore_errors=True)
