"""The class table always comes out: intake caps folders, clean-up cannot crash, outputs safe."""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import stat
import subprocess
import sys
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
import wcwidth

from labs.commands.grade import default_out
from labs.grading.criteria import Grade, Outcome
from labs.grading.errors import BrokenSubmissionError, OutputError
from labs.grading.feedback import write_class_feedback
from labs.grading.hand_in import MAX_DEPTH, MAX_DIRS, take_in
from labs.grading.outputs import (
    private_results_folder,
    read_private,
    write_safely,
)
from labs.grading.summary import csv_text, table_lines, write_csv, write_markdown
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from labs.untrusted import clean_text
from tests.grading import submissions as make


def deep(folder: Path, depth: int) -> Path:
    """A folder nested depth levels below folder, with a file at the bottom."""
    make.nest(folder, depth, leaf="leaf")
    return folder


def wide(folder: Path, count: int) -> Path:
    """count empty folders side by side in folder."""
    for number in range(count):
        (folder / str(number)).mkdir()
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
        (lambda f: wide(f, MAX_DIRS + 1), f"more than {MAX_DIRS}"),
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
    """grades.csv, grades.md and class-report.md are 0600 in a 0700 folder; --out that is a
    link is refused."""
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
    for name in ("grades.csv", "grades.md", "class-report.md"):
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


NAMES = ["张伟", "José Núñez", "Иван Петров", "ada", "Ｆｕｌｌ Ｗｉｄｔｈ", "e\u0301cole", "🦊 fox"]


def test_names_stay_as_written_with_a_column_naming_each_learners_folder(tmp_path: Path) -> None:
    """grades.csv (UTF-8 with BOM, for Excel) keeps each name; its folder holds that report."""
    grades = [Grade(name, {"memory-1": Outcome("pass")}) for name in NAMES]
    write_csv(grades, tmp_path / "grades.csv")
    write_class_feedback(grades, tmp_path)
    raw = (tmp_path / "grades.csv").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [row["submission"] for row in rows] == NAMES
    for row in rows:
        report = (tmp_path / row["folder"] / "report.md").read_text(encoding="utf-8")
        assert report.startswith(f"# {row['submission']}: ")
    assert next(line for line in table_lines(grades) if line.startswith("张伟"))


@pytest.mark.parametrize(
    "start", ["=", "+", "-", "@", " =", "   +", "\t=", "\r=", "\t-", " @"], ids=repr
)
def test_no_cell_a_learner_writes_is_read_as_a_formula(start: str) -> None:
    """A name or note that a spreadsheet would run, spaces or a tab before it or not: text."""
    grade = Grade(f'{start}HYPERLINK("http://x")', notes=[f"{start}cmd|' /C calc'!A0"])
    rows = list(csv.reader(io.StringIO(csv_text([grade]))))
    for cell in (rows[1][0], rows[1][-1]):
        assert cell.startswith("'") and cell.lstrip("' ")[0] in "=+-@", cell


def test_the_terminal_table_lines_up_by_display_width() -> None:
    """Wide (张伟, full-width), combining (école) and plain names: each column starts alike."""
    grades = [Grade(name, notes=["late"]) for name in NAMES]
    lines = table_lines(grades)
    score_at = lines[0].index("score")
    for name, line in zip(NAMES, lines[1:], strict=True):
        rest = line.removeprefix(name)
        assert rest != line
        padding = len(rest) - len(rest.lstrip(" "))
        assert wcwidth.width(name) + padding == score_at, line


HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "a | b || c",
    "![pixel](http://tracker.example/p.png)",
    "[click](javascript:alert(1))",
    "`code` **bold** _em_ ~~gone~~",
    "back\\|slash\\<b>",
    "&lt;b&gt; &#60;i&#62;",
    "line one\n# a heading\n<b>bold</b>",
    "\x1b[2J\x1b]0;pwned\x07\x9b31m\rsly\x08\u202eevil",
]
MARKUP = "<>[]`*_~&|"


def unescaped(text: str) -> str:
    """The characters of text Markdown would read as markup: those no backslash escapes."""
    found, escaped = [], False
    for char in text:
        if not escaped and char in MARKUP:
            found.append(char)
        escaped = char == "\\" and not escaped
    return "".join(found)


def outside_fences(report: str) -> list[str]:
    """The lines of a Markdown file that are not inside a fenced code block."""
    lines, fence = [], ""
    for line in report.splitlines():
        if fence:
            fence = "" if line == fence else fence
        elif re.fullmatch(r"`{3,}", line):
            fence = line
        else:
            lines.append(line)
    return lines


def test_markdown_shows_every_learner_text_as_written(tmp_path: Path) -> None:
    """grades.md and report.md: no HTML, link or image; no pipe breaks the table; one line each."""
    grades = [
        Grade(name, {"memory-1": Outcome("fail", f"got:      {name}")}, notes=[name])
        for name in HOSTILE
    ]
    write_markdown(grades, tmp_path / "grades.md")
    table = (tmp_path / "grades.md").read_text(encoding="utf-8").splitlines()
    header = next(line for line in table if line.startswith("| submission"))
    rows = [line for line in table if line.startswith("| ") and line != header]
    assert len(rows) == len(HOSTILE)
    for row in rows:
        assert unescaped(row) == "|" * header.count("|"), row
    for folder in write_class_feedback(grades, tmp_path):
        lines = outside_fences((folder / "report.md").read_text(encoding="utf-8"))
        assert [unescaped(line) for line in lines] == [""] * len(lines), lines
        headings = [line for line in lines if line.startswith("#")]
        assert len(headings) == 2, headings  # the name's, and the failing criterion's


def test_the_terminal_table_carries_no_escape_or_control_from_a_learner() -> None:
    """Names and notes with ANSI, OSC, CSI, carriage returns and bidi overrides print inert."""
    grades = [Grade(name, notes=[name]) for name in HOSTILE]
    for line in table_lines(grades):
        assert not re.search("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", line), repr(line)


def test_the_default_out_folder_is_one_git_ignores_here(tmp_path: Path) -> None:
    """grades-DATE-TIME where the command runs: in this checkout, a folder .gitignore ignores."""
    when = datetime(2025, 3, 14, 9, 30)
    assert default_out(when, tmp_path) == tmp_path / "grades-2025-03-14-0930"
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for here in (REPO_ROOT, REPO_ROOT / "labs"):
        out = default_out(when, here) / "grades.csv"
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", str(out)], cwd=REPO_ROOT, check=False
        )
        assert ignored.returncode == 0, out


def test_labs_grade_without_out_writes_a_folder_of_its_own(tmp_path: Path) -> None:
    """No grades.csv dropped in the folder it ran from: one grades-* folder holds them all."""
    (tmp_path / "hand-ins").mkdir()
    hand_in = make.not_a_zip(tmp_path / "hand-ins" / "hal.zip")
    here = tmp_path / "here"
    here.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "labs", "grade", str(hand_in)],
        cwd=here,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (out,) = here.iterdir()
    assert out.name.startswith("grades-") and (out / "grades.csv").is_file()
    assert (out / "submissions" / "hal" / "report.md").is_file()
