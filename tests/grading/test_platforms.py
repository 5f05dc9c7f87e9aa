"""Classroom 50 and Gradescope run the autograder `python -m labs autograder` writes.

Each platform's contract is run the way the platform runs it:

- Classroom 50: `autograder.py`, from CLASSROOM/autograders/ASSIGNMENT/, run
  in the learner's checkout by an unprivileged user with passwordless sudo
  (GitHub's runners), with Classroom 50's variables and the job's token in its
  environment; it leaves result.json and release-body.md in the checkout.
- Gradescope: the zip unpacked in /autograder/source, setup.sh run once as
  root, then run_autograder as root from /autograder, grading
  /autograder/submission into /autograder/results/results.json.

On a solved, an unsolved and an attacking checkout: the unsolved starter with
a `pip/` package and a `venv.py` at its root, which report it if any install
or grading step imports them outside the sandbox. The kit is installed once
(both autograders carry the same wheel) and shared by every run here.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from labs.commands.autograder import write_autograder
from labs.grading.criteria import CRITERIA
from labs.grading.kitwheel import build_wheel
from labs.sandbox.files import remove_tree
from tests.grading.checkouts import TREES, learner_checkout, unsolved_earned
from tests.support.modes import Runner, SudoMissingError, give_to, sudo_runner

pytestmark = pytest.mark.slow  # a kit installed, then six gradings

TOKEN = "ghs_" + "fedcba9876543210" * 2
PYTHON = str(Path(sys.base_prefix) / "bin" / "python3")  # the runner's, not this venv's
GRADESCOPE = Path("/autograder")
CLASSROOM_ENV = {
    "CLASSROOM": "koda-course",
    "ASSIGNMENT": "day8",
    "SUBMISSION_TAG": "submission-1",
    "COMMIT_URL": "https://github.com/koda-course/day8-learner/commit/0123abc",
    "RELEASE_URL": "https://github.com/koda-course/day8-learner/releases/tag/submission-1",
    "GITHUB_TOKEN": TOKEN,
}


@dataclass
class Kit:
    """The two autograders, the scratch they share, and where an attack would report."""

    scratch: Path
    classroom: Path  # CLASSROOM/autograders/ASSIGNMENT
    gradescope_zip: Path
    report: Path

    def checkout(self, tree: str, where: Path) -> Path:
        """A learner's repository (tests/grading/checkouts.py), attacks reporting here."""
        return learner_checkout(tree, where, self.report)


@pytest.fixture(scope="module")
def kit() -> Iterator[Kit]:
    """Both autograders from one wheel, the kit and results kept in this module's folders."""
    scratch = Path(tempfile.mkdtemp(prefix="lab-platforms-"))
    os.chmod(scratch, 0o755)
    try:
        wheel = build_wheel(scratch / "wheel")
        places = {"KIT_ROOT": str(scratch / "kit"), "RESULTS_ROOT": str(scratch / "results")}
        classroom = scratch / "classroom" / "autograders" / "day8"
        write_autograder("classroom50", classroom, wheel, **places)
        gradescope_zip = scratch / "gradescope.zip"
        write_autograder("gradescope", gradescope_zip, wheel, **places)
        reports = scratch / "reports"
        reports.mkdir(mode=0o777)
        os.chmod(reports, 0o777)
        yield Kit(scratch, classroom, gradescope_zip, reports / "imported.txt")
    finally:
        remove_tree(scratch)


@pytest.fixture(scope="module")
def sudo_user() -> Iterator[Runner]:
    """GitHub's runner user: unprivileged, with passwordless sudo."""
    try:
        with sudo_runner() as run:
            yield run
    except SudoMissingError as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Classroom 50 autograder test: {error}")
        pytest.skip(str(error))


@dataclass
class Outcome:
    """One run of a platform's contract: its exit code, its log, and the file it left."""

    code: int
    log: str
    document: dict[str, Any]
    feedback: str = ""


@pytest.fixture(scope="module")
def classroom50(kit: Kit, sudo_user: Runner) -> dict[str, Outcome]:
    """autograder.py run by the runner user in each checkout, as Classroom 50 runs it."""
    outcomes = {}
    for tree in TREES:
        checkout = kit.checkout(tree, kit.scratch / f"classroom50-{tree}")
        give_to(checkout, sudo_user.uid)
        done = sudo_user.run(
            [PYTHON, str(kit.classroom / "autograder.py")],
            cwd=checkout,
            env=CLASSROOM_ENV,
            timeout=900,
            no_new_privs=False,
        )
        result = checkout / "result.json"
        outcomes[tree] = Outcome(
            done.returncode,
            done.stdout + done.stderr,
            json.loads(result.read_text(encoding="utf-8")) if result.is_file() else {},
            (checkout / "release-body.md").read_text(encoding="utf-8")
            if (checkout / "release-body.md").is_file()
            else "",
        )
    return outcomes


@contextlib.contextmanager
def autograder_folder() -> Iterator[Path]:
    """Gradescope's /autograder, made for this test and removed after (never one left before)."""
    lock = open("/tmp/.koda-lab-gradescope-test.lock", "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        if GRADESCOPE.exists():
            pytest.skip(f"{GRADESCOPE} exists on this machine: not a Gradescope image to borrow")
        GRADESCOPE.mkdir(mode=0o755)
        yield GRADESCOPE
    finally:
        shutil.rmtree(GRADESCOPE, ignore_errors=True)
        lock.close()


@pytest.fixture(scope="module")
def gradescope(kit: Kit) -> Iterator[dict[str, Outcome]]:
    """setup.sh once, then run_autograder per submission, as root, as Gradescope runs them."""
    if os.geteuid() != 0:
        pytest.skip("Gradescope runs its autograder as root")
    env = {"PATH": f"{Path(PYTHON).parent}:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
    outcomes = {}
    with autograder_folder() as root:
        source = root / "source"
        with zipfile.ZipFile(kit.gradescope_zip) as archive:
            archive.extractall(source)
        shutil.copyfile(source / "run_autograder", root / "run_autograder")
        os.chmod(root / "run_autograder", 0o755)
        setup = subprocess.run(
            ["bash", str(source / "setup.sh")],
            cwd=source,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
        for tree in TREES:
            for folder in ("submission", "results"):
                shutil.rmtree(root / folder, ignore_errors=True)
            kit.checkout(tree, root / "submission")
            (root / "results").mkdir()
            done = subprocess.run(
                [str(root / "run_autograder")],
                cwd=root,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            results = root / "results" / "results.json"
            outcomes[tree] = Outcome(
                done.returncode,
                done.stdout + done.stderr,
                json.loads(results.read_text(encoding="utf-8")) if results.is_file() else {},
            )
        yield outcomes


def test_classroom50s_result_json_has_its_published_shape(classroom50: dict[str, Outcome]) -> None:
    """The schema, the run's context, the score and per criterion its name, points and verdict."""
    for tree, outcome in classroom50.items():
        assert outcome.code == 0, (tree, outcome.log[-4000:])
        document = outcome.document
        assert set(document) == {
            "schema",
            "classroom",
            "assignment",
            "submission",
            "commit",
            "release",
            "review",
            "datetime",
            "score",
            "max-score",
            "tests",
        }
        assert document["schema"] == "classroom50/result/v1"
        assert document["classroom"] == CLASSROOM_ENV["CLASSROOM"]
        assert document["assignment"] == CLASSROOM_ENV["ASSIGNMENT"]
        assert document["submission"] == CLASSROOM_ENV["SUBMISSION_TAG"]
        assert document["commit"] == document["review"] == CLASSROOM_ENV["COMMIT_URL"]
        assert document["release"] == CLASSROOM_ENV["RELEASE_URL"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", document["datetime"])
        assert [t["test-name"] for t in document["tests"]] == [c.title for c in CRITERIA]
        for test, criterion in zip(document["tests"], CRITERIA, strict=True):
            assert set(test) == {"test-name", "passed", "score", "max-score"}
            assert test["max-score"] == criterion.points
            assert test["score"] == (criterion.points if test["passed"] else 0)
        assert document["score"] == sum(t["score"] for t in document["tests"])
        assert document["max-score"] == sum(c.points for c in CRITERIA)


def test_classroom50_gives_each_checkout_its_honest_score(classroom50: dict[str, Outcome]) -> None:
    """Solved: every point; unsolved: checks 1, 2, 6 and the typecheck; attacking: the same."""
    passed = {
        tree: {t["test-name"] for t in o.document["tests"] if t["passed"]}
        for tree, o in classroom50.items()
    }
    assert passed["solved"] == {c.title for c in CRITERIA}
    assert passed["unsolved"] == unsolved_earned()
    assert passed["attacking"] == passed["unsolved"]
    assert classroom50["attacking"].document["score"] == classroom50["unsolved"].document["score"]


def test_classroom50s_feedback_is_the_points_and_what_failed(
    classroom50: dict[str, Outcome],
) -> None:
    """release-body.md: the score, a row per criterion, the failing ones' words, the commit."""
    for _tree, outcome in classroom50.items():
        score, most = outcome.document["score"], outcome.document["max-score"]
        assert f"{score} / {most} points" in outcome.feedback
        assert all(c.title in outcome.feedback for c in CRITERIA)
        assert CLASSROOM_ENV["COMMIT_URL"] in outcome.feedback
        assert TOKEN not in outcome.feedback + outcome.log
    assert "### check 3 on memory" in classroom50["unsolved"].feedback
    assert "### " not in classroom50["solved"].feedback


def test_gradescopes_results_json_has_its_published_shape(gradescope: dict[str, Outcome]) -> None:
    """Per criterion its name, score, max_score, output and visibility; the total as score."""
    for tree, outcome in gradescope.items():
        assert outcome.code == 0, (tree, outcome.log[-4000:])
        document = outcome.document
        assert [t["name"] for t in document["tests"]] == [c.title for c in CRITERIA]
        for test, criterion in zip(document["tests"], CRITERIA, strict=True):
            assert {"score", "max_score", "output", "visibility"} <= test.keys()
            assert test["max_score"] == criterion.points
            assert test["visibility"] == "visible"
        assert document["score"] == sum(t["score"] for t in document["tests"])
        assert document["visibility"] == "visible"
        assert f"{document['score']} / 110 points" in document["output"]


def test_gradescope_gives_each_submission_its_honest_score(gradescope: dict[str, Outcome]) -> None:
    """Solved: every point; unsolved: checks 1, 2, 6 and the typecheck; attacking: the same."""
    passed = {
        tree: {t["name"] for t in o.document["tests"] if t["score"] == t["max_score"]}
        for tree, o in gradescope.items()
    }
    assert passed["solved"] == {c.title for c in CRITERIA}
    assert passed["unsolved"] == unsolved_earned()
    assert passed["attacking"] == passed["unsolved"]
    failing = next(t for t in gradescope["unsolved"].document["tests"] if t["score"] == 0)
    assert failing["output"]


def test_no_install_or_grading_step_imported_the_learners_files(
    kit: Kit, classroom50: dict[str, Outcome], gradescope: dict[str, Outcome]
) -> None:
    """The attacking checkout's pip/ and venv.py were never imported by root, on either platform."""
    reports = kit.report.read_text(encoding="utf-8") if kit.report.exists() else ""
    assert "uid 0" not in reports, reports


def test_each_run_grades_into_a_folder_of_its_own(
    kit: Kit, classroom50: dict[str, Outcome], gradescope: dict[str, Outcome]
) -> None:
    """Six runs, six results folders, each private to root: none reused, none shared."""
    folders = [p for p in (kit.scratch / "results").iterdir() if p.is_dir()]
    assert len(folders) == len(classroom50) + len(gradescope)
    assert all(os.stat(p).st_uid == 0 and os.stat(p).st_mode & 0o077 == 0 for p in folders)


def test_the_gradescope_zip_holds_its_two_scripts_at_the_top(kit: Kit) -> None:
    """setup.sh and run_autograder at the zip's top, executable, beside what they install."""
    with zipfile.ZipFile(kit.gradescope_zip) as archive:
        members = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    wheels = [name for name in members if name.endswith(".whl")]
    assert set(members) == {
        "setup.sh",
        "run_autograder",
        "autograder.py",
        "constraints.txt",
        *wheels,
    }
    assert len(wheels) == 1
    assert members["run_autograder"] & 0o111 and members["setup.sh"] & 0o111


def test_the_autograder_names_the_kit_it_installs(kit: Kit) -> None:
    """`autograder.py --version` names its platform and the wheel it installs."""
    (wheel,) = kit.classroom.glob("*.whl")
    done = subprocess.run(
        [PYTHON, str(kit.classroom / "autograder.py"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.split() == [
        "autograder.py",
        "(classroom50)",
        "for",
        wheel.name,
    ]
