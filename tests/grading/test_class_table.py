"""The class table always comes out: intake caps folders, clean-up cannot crash, outputs safe."""

from __future__ import annotations

import csv
import io
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from labs.grading.criteria import Grade, Outcome
from labs.grading.errors import BrokenSubmissionError, OutputError
from labs.grading.intake import MAX_DEPTH, MAX_DIRS, take_in
from labs.grading.outputs import (
    private_results_folder,
    read_private,
    write_safely,
)
from labs.grading.summary import csv_text, write_csv
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from labs.untrusted import clean_text
from tests.grading import submissions as make


def deep(folder: Path, depth: int) -> Path:
    """A folder nested depth levels below folder, with a file at the bottom."""
    make.nest(folder, depth, leaf="leaf")
    return folder


@pytest.mark.slow
def test_a_folder_deeper_than_python_recurses_is_removed(tmp_path: Path) -> None:
    """1,200 levels, 60,000 empty folders and a link out: all removed, the link's target kept."""
    target = tmp_path / "kept.txt"
    target.write_text("mine", encoding="utf-8")
    doomed = tmp_path / "doomed"
    doomed.mkdir()
    deep(doomed, 1200)
    wide = doomed / "wide"
    wide.mkdir()
    for number in range(60_000):
        os.mkdir(wide / str(number))
    (doomed / "link").symlink_to(tmp_path)
    remove_tree(doomed)
    assert not doomed.exists()
    assert target.read_text(encoding="utf-8") == "mine"


@pytest.mark.parametrize(
    ("build", "why"),
    [
        (lambda f: deep(f, MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} deep"),
        (lambda f: [os.mkdir(f / str(n)) for n in range(MAX_DIRS + 1)], f"more than {MAX_DIRS}"),
    ],
    ids=["deep", "wide"],
)
def test_a_folder_past_the_caps_is_refused_at_intake(
    tmp_path: Path, build: object, why: str
) -> None:
    """Folders too deep or too many are refused, naming the cap, as a folder and as a zip."""
    hand_in = tmp_path / "hand-in"
    hand_in.mkdir()
    build(hand_in)  # type: ignore[operator]
    with pytest.raises(BrokenSubmissionError, match=why):
        take_in(hand_in, tmp_path / "scratch")
    archive = tmp_path / "hand-in.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for here, _, files in os.walk(hand_in):
            relative = Path(here).relative_to(hand_in)
            if relative != Path("."):
                out.writestr(f"{relative.as_posix()}/", "")
            for name in files:
                out.writestr((relative / name).as_posix(), "")
    with pytest.raises(BrokenSubmissionError, match=why):
        take_in(archive, tmp_path / "scratch-zip")


def test_a_name_that_is_not_utf8_is_written_as_escapes() -> None:
    """The bytes Python keeps of such a name come out as \\xNN, in every cell they reach."""
    name = os.fsdecode(b"caf\xe9-\xff")
    assert clean_text(name) == "caf\\xe9-\\xff"
    grade = Grade(clean_text(name), {"memory-1": Outcome("fail", name)}, notes=[name])
    text = csv_text([grade])
    assert "caf\\xe9-\\xff" in text
    text.encode("utf-8")


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
def test_a_cell_a_spreadsheet_would_run_is_written_as_text(start: str) -> None:
    """A name or a note that begins like a formula is quoted with a leading apostrophe."""
    grade = Grade(f"{start}HYPERLINK(1)", notes=[f"{start}cmd|' /C calc'!A0"])
    rows = list(csv.reader(io.StringIO(csv_text([grade]))))
    assert rows[1][0] == f"'{start}HYPERLINK(1)"
    assert rows[1][-1] == f"'{start}cmd|' /C calc'!A0"


def test_an_output_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    """grades.csv planted as a link to another file: that file stays, grades.csv is 0600."""
    victim = tmp_path / "victim"
    victim.write_text("precious", encoding="utf-8")
    (tmp_path / "grades.csv").symlink_to(victim)
    write_csv([Grade("ada")], tmp_path / "grades.csv")
    assert victim.read_text(encoding="utf-8") == "precious"
    info = os.lstat(tmp_path / "grades.csv")
    assert stat.S_ISREG(info.st_mode) and info.st_mode & 0o777 == 0o600
    linked = tmp_path / "linked"
    linked.symlink_to(tmp_path)
    with pytest.raises(OutputError, match="could not write"):
        write_safely(linked / "grades.md", "x")


def test_results_live_in_a_private_folder_of_an_unpredictable_name(tmp_path: Path) -> None:
    """0700 folders, a random name, and one prepared by someone else is refused."""
    parent = tmp_path / "results"
    folder = private_results_folder(parent)
    assert folder.parent == parent and folder.name.startswith("grades-") and len(folder.name) > 10
    assert os.stat(parent).st_mode & 0o777 == os.stat(folder).st_mode & 0o777 == 0o700
    write_safely(folder / "results.json", "{}")
    assert private_results_folder(parent) != folder  # each run a folder of its own
    assert read_private(folder / "results.json") == "{}"
    (folder / "link.json").symlink_to(folder / "results.json")
    with pytest.raises(OutputError):
        read_private(folder / "link.json")
    open_parent = tmp_path / "open"
    open_parent.mkdir(mode=0o755)
    os.chmod(open_parent, 0o755)
    with pytest.raises(OutputError, match="others may enter"):
        private_results_folder(open_parent)


def test_the_grade_command_writes_private_files_and_refuses_a_linked_out_folder(
    tmp_path: Path,
) -> None:
    """grades.csv and grades.md are 0600 in a 0700 folder; --out that is a link is refused."""
    make.starter_copy(tmp_path / "ben")
    command = [sys.executable, "-m", "labs", "grade", str(tmp_path / "ben"), "--timeout", "10"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "out")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert os.stat(tmp_path / "out").st_mode & 0o777 == 0o700
    for name in ("grades.csv", "grades.md"):
        assert os.stat(tmp_path / "out" / name).st_mode & 0o777 == 0o600
    (tmp_path / "elsewhere").symlink_to(tmp_path / "out")
    refused = subprocess.run(
        [*command, "--out", str(tmp_path / "elsewhere")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert refused.returncode == 2 and "is a link" in refused.stderr
