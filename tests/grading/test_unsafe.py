"""Without any sandbox, grading refuses; told --unsafe-no-sandbox, every report says so."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from labs.grading.notes import UNSAFE
from labs.sandbox.files import remove_tree
from labs.sandbox.limits import Caps, Isolation, SandboxMode
from tests.grading import submissions as make
from tests.support.modes import ALL_MODES, Runner, give_to, offered, open_folder, runner

NONE = next(mode for mode in ALL_MODES if mode.name == "user-none")
pytestmark = pytest.mark.skipif(bool(offered(NONE)), reason=offered(NONE))
SAYS = "WITHOUT A SANDBOX"


@pytest.fixture(scope="module")
def unsandboxed() -> Iterator[tuple[Runner, Path]]:
    """A user with no bwrap and no root, and a folder of theirs holding the plain starter."""
    with runner(NONE) as run:
        folder = open_folder("lab-unsafe-")
        try:
            make.starter_copy(folder / "ben")
            give_to(folder, run.uid)
            yield run, folder
        finally:
            remove_tree(folder)


def test_grading_refuses_without_a_sandbox(unsandboxed: tuple[Runner, Path]) -> None:
    """labs grade and the pytest entry both refuse, saying what to do, and write no grade."""
    run, folder = unsandboxed
    graded = run.python("-m", "labs", "grade", str(folder / "ben"), "--out", str(folder / "out"))
    assert graded.returncode == 2 and "refusing to grade" in graded.stderr
    assert "bubblewrap" in graded.stderr and "--unsafe-no-sandbox" in graded.stderr
    assert not (folder / "out" / "grades.csv").exists()
    results = folder / "refused.json"
    pinned = run.python(
        "-P",
        "-m",
        "labs.grading.pytest_main",
        f"--lab-tree={folder / 'ben' / 'starter'}",
        f"--lab-results={results}",
    )
    assert pinned.returncode == 4 and "refusing to grade" in pinned.stderr
    assert not results.exists()


def test_told_to_grade_anyway_every_report_says_there_was_no_sandbox(
    unsandboxed: tuple[Runner, Path],
) -> None:
    """Table, CSV, Markdown, results.json's note and each failing criterion's message say so."""
    run, folder = unsandboxed
    out = folder / "out-unsafe"
    graded = run.python(
        "-m", "labs", "grade", str(folder / "ben"), "--out", str(out), "--unsafe-no-sandbox"
    )
    assert graded.returncode == 0, graded.stderr[-2000:]
    assert SAYS in graded.stdout
    assert Isolation(SandboxMode.NONE, False, False, Caps.RLIMITS).describe() in graded.stdout
    with (out / "grades.csv").open(encoding="utf-8-sig") as table:
        assert UNSAFE in next(csv.DictReader(table))["note"]
    assert SAYS in (out / "grades.md").read_text(encoding="utf-8")
    results = folder / "unsafe.json"
    pinned = run.python(
        "-P",
        "-m",
        "labs.grading.pytest_main",
        f"--lab-tree={folder / 'ben' / 'starter'}",
        f"--lab-results={results}",
        "--lab-only=memory-1,memory-3,typecheck",
        "--unsafe-no-sandbox",
    )
    assert pinned.returncode == 0, pinned.stdout[-2000:] + pinned.stderr[-2000:]
    document = json.loads(results.read_text(encoding="utf-8"))
    assert UNSAFE in document["note"]
    failing = [test for test in document["tests"] if test["status"] != "pass"]
    assert failing and all(UNSAFE in test["message"] for test in failing)
    assert SAYS in pinned.stdout
