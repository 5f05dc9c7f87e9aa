"""The GitHub Classroom workflow: learner code runs once, in the sandbox; each step reads a verdict.

The workflow is parsed and its commands are run in order, as the runner runs
them: as an unprivileged user with passwordless sudo, with the job's secrets
in its environment, on a solved, an unsolved and a tampering tree. The kit is
installed by the workflow's own commands into a root-owned virtualenv; the
grading step runs once per tree, and every criterion's step is then checked
against it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from labs.commands.release import write_release
from labs.grading.classroom import (
    BUBBLEWRAP_COMMAND,
    COMMAND_GRADER,
    DATABASE_URL,
    GRADE_COMMAND,
    KIT_PATH,
    KIT_VENV,
    PINNED_REF,
    REPORTER,
    RESULTS,
    WORKFLOW_PATH,
    classroom_workflow,
    step_id,
)
from labs.grading.criteria import CRITERIA
from labs.pg.cluster import TempCluster
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.grading.conftest import reachable_database
from tests.grading.mistakes import migrations as variant
from tests.support.modes import Runner, SudoMissingError, give_to, sudo_runner
from tests.support.processes import marked

pytestmark = pytest.mark.slow  # the workflow's commands, run as a user with sudo

WORKFLOW = REPO_ROOT / WORKFLOW_PATH
TOKEN = "ghs_" + "0123456789abcdef" * 2  # the job's GITHUB_TOKEN in this test
DAEMONS = "5151.37"  # what the tampering tree's setsid daemons sleep
STORM = "5252.41"  # what its 300 children sleep


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
    """Named as Classroom expects, one job, one step per criterion with its points, the reporter."""
    assert workflow()["name"] == "Autograding Tests"
    steps = grader_steps()
    assert [step["with"]["max-score"] for step in steps] == [c.points for c in CRITERIA]
    assert [step["id"] for step in steps] == [step_id(c) for c in CRITERIA]
    for step, criterion in zip(steps, CRITERIA, strict=True):
        assert step["with"]["test-name"] == criterion.title
        assert step["with"]["timeout"] > 0
    reporter = job()["steps"][-1]
    assert reporter["uses"] == REPORTER
    ids = [step["id"] for step in steps]
    assert reporter["with"]["runners"] == ",".join(ids)
    assert reporter["env"] == {
        f"{i.upper()}_RESULTS": f"${{{{steps.{i}.outputs.result}}}}" for i in ids
    }


def test_learner_code_runs_once_and_each_criterion_step_only_reads_its_verdict() -> None:
    """One grading step, with sudo and an empty environment, before steps that read a verdict."""
    runs = [step["run"] for step in job()["steps"] if "run" in step]
    grading = [i for i, step in enumerate(job()["steps"]) if step.get("run") == GRADE_COMMAND]
    assert len(grading) == 1
    assert shlex.split(GRADE_COMMAND)[:3] == ["sudo", "env", "-i"]
    assert {a.partition("=")[0] for a in shlex.split(GRADE_COMMAND)[3:5]} == {
        "PATH",
        "DATABASE_URL",
    }
    first_reader = job()["steps"].index(grader_steps()[0])
    assert grading[0] < first_reader
    for step, criterion in zip(grader_steps(), CRITERIA, strict=True):
        command = shlex.split(step["with"]["command"])
        assert command[:4] == ["sudo", f"{KIT_VENV}/bin/python", "-P", "-m"]
        assert command[4:7] == ["labs.grading.verdicts", "read", criterion.key]
        assert command[-2:] == ["--from", RESULTS]
    assert "env" not in job()  # the job's environment holds nothing for the grader to pass on
    assert not any("pytest_main" in run for run in runs)


def test_the_kit_comes_from_a_pinned_commit_installed_root_owned_and_not_editable() -> None:
    """The kit is checked out at a full commit hash, pip-installed by root outside the workspace."""
    checkouts = [s for s in job()["steps"] if s.get("uses", "").startswith("actions/checkout")]
    kit = next(s for s in checkouts if "repository" in s.get("with", {}))
    assert PINNED_REF.fullmatch(kit["with"]["ref"])
    assert kit["with"]["path"] == KIT_PATH
    installs = [line for s in job()["steps"] for line in s.get("run", "").splitlines()]
    pip = [line for line in installs if "pip install" in line]
    constraints = f"./{KIT_PATH}/labs/grading/constraints.txt"
    install = (
        f"sudo {KIT_VENV}/bin/python -m pip install --no-cache-dir "
        f"-c '{constraints}' './{KIT_PATH}[grading]'"
    )
    assert pip == [install]
    assert not KIT_VENV.startswith(("/home", "/github", "./"))


def test_the_database_criteria_have_a_postgres_service() -> None:
    """A Postgres service container, and the grading step's DATABASE_URL pointing at it."""
    postgres = job()["services"]["postgres"]
    assert postgres["image"].startswith("postgres:")
    user, password = postgres["env"]["POSTGRES_USER"], postgres["env"]["POSTGRES_PASSWORD"]
    assert DATABASE_URL.startswith(f"postgresql://{user}:{password}@localhost:")
    assert f"DATABASE_URL={DATABASE_URL}" in GRADE_COMMAND


@pytest.mark.parametrize(
    ("bad", "message"),
    [({"ref": "main"}, "full commit hash"), ({"repository": "not a repo"}, "owner/name")],
)
def test_the_workflow_refuses_an_unpinned_kit(bad: dict[str, str], message: str) -> None:
    """A branch name or a malformed repository is refused before any workflow is written."""
    with pytest.raises(ValueError, match=message):
        classroom_workflow(**bad)


@dataclass
class Workflow:
    """The runner of these tests: the sudo user, and where the workflow's paths point here."""

    run: Runner
    scratch: Path
    venv: Path

    def localized(self, command: str, workspace: Path, database_url: str) -> str:
        """The workflow's command with its fixed places moved to this test's (and tree's) own."""
        return (
            command.replace(KIT_VENV, str(self.venv))
            .replace(RESULTS, str(workspace.parent / f"results-{workspace.name}"))
            .replace(DATABASE_URL, shlex.quote(database_url))
        )

    def step(self, command: str, workspace: Path, env: dict[str, str], database_url: str) -> Any:
        """Run one of the workflow's commands in the workspace, as the runner's shell would."""
        # setup-python puts its interpreter first on PATH: here, this test's.
        path = f"{os.path.dirname(sys.executable)}:{self.run.path}"
        return self.run.run(
            ["/bin/bash", "-e", "-c", self.localized(command, workspace, database_url)],
            cwd=workspace,
            env={**env, "PATH": path},
            timeout=900,
            no_new_privs=False,
        )


@pytest.fixture(scope="module")
def workflow_runner() -> Iterator[Workflow]:
    """The sudo user, and the kit installed by the workflow's own install commands."""
    with contextlib.ExitStack() as stack:
        try:
            run = stack.enter_context(sudo_runner())
        except SudoMissingError as error:
            if os.environ.get("CI"):
                pytest.fail(f"CI must run the Classroom workflow test: {error}")
            pytest.skip(str(error))
        scratch = Path(tempfile.mkdtemp(prefix="lab-classroom-"))
        stack.callback(remove_tree, scratch)
        os.chmod(scratch, 0o755)
        kit_source = scratch / "kit-workspace"
        kit_source.mkdir()
        write_release(kit_source / KIT_PATH)
        give_to(kit_source, run.uid)
        runner = Workflow(run, scratch, scratch / "lab-kit")
        install = next(s for s in job()["steps"] if "pip install" in s.get("run", ""))
        done = runner.step(install["run"], kit_source, {}, DATABASE_URL)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield runner


def tampering_code(kit_files: list[Path], github_output: Path) -> str:
    """A region that tries every Classroom finding of the issue at import."""
    return f"""
import glob as _glob, os as _os, sys as _sys
_found = []
for _path in _glob.glob("/proc/*/environ"):
    try:
        with open(_path, "rb") as _f:
            _found.append(_f.read())
    except OSError:
        pass
_leaks = [_e for _e in _found if {TOKEN.encode()!r} in _e or b"GITHUB_" in _e]
for _target in {[str(p) for p in kit_files]!r}:
    try:
        with open(_target, "a") as _f:
            _f.write("\\nTAMPERED = True\\n")
    except OSError:
        pass
try:
    with open({str(github_output)!r}, "a") as _f:
        _f.write("result=pass\\n")
except OSError:
    pass
try:
    _os.close(_os.open("/proc/%d/mem" % _os.getppid(), _os.O_RDWR))
    _mem = "opened"
except OSError:
    _mem = "refused"
for _ in range(6):
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            _os.execv("/bin/sleep", ["sleep", {DAEMONS!r}])
        _os._exit(0)
_sys.stderr.write("tampered: %d leaks, mem %s\\n" % (len(_leaks), _mem))
for _ in range(300):
    try:
        if _os.fork() == 0:
            _os.execv("/bin/sleep", ["sleep", {STORM!r}])
    except OSError:
        pass
"""


def digest(paths: list[Path]) -> str:
    """One hash over the files' bytes."""
    sha = hashlib.sha256()
    for path in paths:
        sha.update(path.read_bytes())
    return sha.hexdigest()


@dataclass
class Graded:
    """One tree run through the workflow: what each step said, and what the machine kept."""

    earned: dict[str, int]
    outputs: str  # everything every step printed
    github_output: str
    kit_unchanged: bool
    survivors: list[int]


def run_workflow(runner: Workflow, tree: str, database_url: str) -> Graded:
    """The workflow's grading step once for a tree, then every criterion's step."""
    workspace = runner.scratch / f"workspace-{tree}"
    if tree == "solved":
        make.fixed(workspace)
        variant.place(workspace / "starter", variant.reference())
    else:
        make.starter_copy(workspace)
    github_output = workspace.parent / f"github-output-{tree}"
    github_output.write_text("", encoding="utf-8")
    shutil.copytree(runner.scratch / "kit-workspace" / KIT_PATH, workspace / KIT_PATH)
    installed = sorted(runner.venv.glob("lib/python*/site-packages/labs/*.py"))
    kit_files = [*installed, *sorted((workspace / KIT_PATH / "labs").glob("*.py"))]
    if tree == "tampering":
        make.add_region_code(workspace / "starter", tampering_code(kit_files, github_output))
    give_to(workspace, runner.run.uid)
    give_to(github_output, runner.run.uid)
    before = digest(kit_files)
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_OUTPUT": str(github_output), "DATABASE_URL": database_url}
    grading = runner.step(GRADE_COMMAND, workspace, env, database_url)
    assert grading.returncode == 0, grading.stdout[-3000:] + grading.stderr[-3000:]
    time.sleep(0.2)
    # Its daemons and children by name, and anything run from the kit's interpreter (hosts).
    survivors = marked(DAEMONS) + marked(STORM) + marked(str(runner.venv))
    outputs, earned = grading.stdout + grading.stderr, {}
    for step in grader_steps():
        done = runner.step(step["with"]["command"], workspace, env, database_url)
        assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
        outputs += done.stdout + done.stderr
        if done.returncode == 0:
            earned[step["id"]] = step["with"]["max-score"]
    return Graded(
        earned,
        outputs,
        github_output.read_text(encoding="utf-8"),
        digest(kit_files) == before,
        survivors,
    )


@pytest.fixture(scope="module")
def workflow_database(pg_cluster: TempCluster) -> Iterator[str]:
    """A database for the module's three trees, its socket reachable by the sandboxes' users."""
    with reachable_database(pg_cluster) as url:
        yield url


@pytest.fixture(scope="module")
def unsolved_points() -> dict[str, int]:
    """What the plain starter earns: checks 1, 2 and 6 on memory, and the typecheck if it passes."""
    from labs.grading.grader import Grader
    from labs.trees.finding import tree_root

    earned = {f"memory{n}": 10 for n in (1, 2, 6)}
    if Grader(tree_root("starter")).typecheck().passed:
        earned["typecheck"] = 10
    return earned


@pytest.mark.parametrize("tree", ["solved", "unsolved", "tampering"])
def test_each_tree_earns_exactly_its_verdicts_and_leaves_nothing_behind(
    workflow_runner: Workflow, workflow_database: str, unsolved_points: dict[str, int], tree: str
) -> None:
    """Solved: every step; unsolved: 1, 2, 6 and the typecheck; tampering: no more than unsolved.

    The tampering tree appends to the kit, reads every /proc/*/environ, writes
    GITHUB_OUTPUT, opens its parent's memory, leaves six setsid daemons and
    forks 300 times: the kit is unchanged, no secret shows anywhere,
    GITHUB_OUTPUT is untouched, it is stopped at its process cap, and nothing
    of it is left running.
    """
    graded = run_workflow(workflow_runner, tree, workflow_database)
    assert graded.kit_unchanged
    assert graded.survivors == []
    assert graded.github_output == ""
    assert TOKEN not in graded.outputs
    if tree == "solved":
        assert graded.earned == {step_id(c): c.points for c in CRITERIA}, graded.outputs[-4000:]
    elif tree == "unsolved":
        assert graded.earned == unsolved_points, graded.outputs[-4000:]
    else:
        assert set(graded.earned) <= set(unsolved_points)
        assert "the submission was stopped" in graded.outputs
        assert "needs review" in graded.outputs


def test_bubblewrap_is_installed_by_the_workflow() -> None:
    """The runner gets bwrap from apt before the kit is installed (not run here: it is there)."""
    runs = [step.get("run", "") for step in job()["steps"]]
    kit = next(i for i, run in enumerate(runs) if "pip install" in run)
    assert runs.index(BUBBLEWRAP_COMMAND) < kit
