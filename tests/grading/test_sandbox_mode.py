"""A missing sandbox is loud: a grading run names its mode first, and --require-bwrap refuses.

Every recipe the kit ships for CI (the GitHub Actions workflow, the Classroom
50 and Gradescope autograders) installs bubblewrap and grades with
--require-bwrap, so a runner without it fails instead of grading with less.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from labs.commands.autograder import SETUP_SH
from labs.grading import autograder_script
from labs.grading.actions import grading_workflow
from labs.sandbox.files import remove_tree
from labs.sandbox.modes import BWRAP_FLAG, INSTALL_BWRAP
from tests.grading import submissions as make
from tests.support.modes import ALL_MODES, Mode, Runner, give_to, offered, open_folder, runner

GRADING_MODES = [m for m in ALL_MODES if m.name != "user-none"]  # user-none refuses anyway
WITHOUT_BWRAP = [m for m in ALL_MODES if not m.bwrap]
GRADING_IDS, WITHOUT_IDS = [m.name for m in GRADING_MODES], [m.name for m in WITHOUT_BWRAP]


@pytest.fixture
def hand_ins(request: pytest.FixtureRequest) -> Iterator[tuple[Runner, Path]]:
    """The mode's runner, and a folder it owns with a starter copy (ben) and an empty hand-in."""
    mode: Mode = request.param
    if offered(mode):
        pytest.skip(offered(mode))
    with runner(mode) as run:
        folder = open_folder("lab-mode-")
        try:
            make.starter_copy(folder / "ben")
            (folder / "empty").mkdir()
            give_to(folder, run.uid)
            yield run, folder
        finally:
            remove_tree(folder)


@pytest.mark.parametrize("hand_ins", GRADING_MODES, ids=GRADING_IDS, indirect=True)
def test_the_first_line_a_grading_run_prints_names_its_mode(
    hand_ins: tuple[Runner, Path],
) -> None:
    """labs grade and the pytest entry say bwrap or uid before anything else, on stderr."""
    run, folder = hand_ins
    wanted = "bwrap" if run.mode.bwrap else "uid"
    required = [BWRAP_FLAG] if run.mode.bwrap else []  # with bwrap, --require-bwrap grades
    graded = run.python(
        "-m", "labs", "grade", *required, str(folder / "empty"), "--out", str(folder / "out")
    )
    assert graded.returncode == 0, graded.stderr[-2000:]
    assert graded.stderr.splitlines()[0].startswith(f"sandbox mode {wanted}: "), graded.stderr
    pinned = run.python(
        "-P",
        "-m",
        "labs.grading.pytest_main",
        *required,
        f"--lab-tree={folder / 'ben' / 'starter'}",
        f"--lab-results={folder / 'ben.json'}",
        "--lab-only=memory-1",
    )
    assert pinned.returncode == 0, pinned.stdout[-2000:] + pinned.stderr[-2000:]
    assert pinned.stderr.splitlines()[0].startswith(f"sandbox mode {wanted}: "), pinned.stderr


@pytest.mark.parametrize("hand_ins", WITHOUT_BWRAP, ids=WITHOUT_IDS, indirect=True)
def test_require_bwrap_without_bwrap_refuses_to_start_and_grades_nothing(
    hand_ins: tuple[Runner, Path],
) -> None:
    """labs grade, the pytest entry and the platforms' entry: non-zero, one line naming the fix."""
    run, folder = hand_ins
    out, results, into = folder / "out", folder / "ben.json", folder / "into"
    graded = run.python("-m", "labs", "grade", BWRAP_FLAG, str(folder / "ben"), "--out", str(out))
    pinned = run.python(
        "-P",
        "-m",
        "labs.grading.pytest_main",
        BWRAP_FLAG,
        f"--lab-tree={folder / 'ben' / 'starter'}",
        f"--lab-results={results}",
    )
    platforms = run.python(
        "-m",
        "labs.grading.autograde",
        "grade",
        BWRAP_FLAG,
        "--tree",
        str(folder / "ben" / "starter"),
        "--into",
        str(into),
    )
    for done, code in ((graded, 2), (pinned, 4), (platforms, 3)):
        assert done.returncode == code, done.stdout[-2000:] + done.stderr[-2000:]
        (reason,) = done.stderr.splitlines()
        assert BWRAP_FLAG in reason and INSTALL_BWRAP in reason, reason
    assert graded.stdout == "" and not out.exists()
    assert not results.exists() and not into.exists()


def test_the_github_workflow_installs_bubblewrap_then_grades_requiring_it() -> None:
    """The apt step comes before the grading step, and the grading step passes the flag."""
    steps = yaml.safe_load(grading_workflow())["jobs"]["grade"]["steps"]
    runs = [str(step.get("run", "")) for step in steps]
    installs = next(i for i, text in enumerate(runs) if "apt-get install -y -qq bubblewrap" in text)
    grades = next(i for i, text in enumerate(runs) if "labs.grading.autograde grade" in text)
    assert installs < grades
    assert f"labs.grading.autograde grade {BWRAP_FLAG} " in runs[grades]


def test_the_platforms_autograder_installs_bubblewrap_and_grades_requiring_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """autograder.py (Classroom 50 and Gradescope) apt-installs a missing bwrap; grades with it."""
    commands: list[list[str]] = []

    def recorded(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(autograder_script, "run", recorded)
    monkeypatch.setattr("shutil.which", lambda name, path=None: None)  # no bwrap on PATH
    autograder_script.install_bubblewrap()
    assert commands[-1][-2:] == ["-qq", "bubblewrap"] and "install" in commands[-1]
    monkeypatch.setattr(autograder_script, "install", lambda: Path("/kit/bin/python"))
    monkeypatch.setattr(autograder_script, "private_folder", lambda path, mode: tmp_path)
    autograder_script.grade(tmp_path / "starter")
    assert commands[-1][3:6] == ["labs.grading.autograde", "grade", BWRAP_FLAG]
    assert "need+=(bubblewrap)" in SETUP_SH  # Gradescope's image gets it at setup too
