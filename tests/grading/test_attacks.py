"""A hostile class, graded in every mode this machine offers: never more than the honest grade.

The class is graded once per mode with `python -m labs grade`, as root (bwrap
on PATH, or hidden from it) and as a throwaway unprivileged user (with and
without bwrap), beside honest hand-ins whose grades must come out as if they
had been graded alone. Each attack gets its honest grade or a clear "could
not grade" / "needs review", and nothing it started outlives grading. As
that user without bwrap there is no sandbox at all: grading refuses, and
every attack's test says so.
"""

from __future__ import annotations

import csv
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from labs.grading.criteria import Grade
from labs.grading.summary import write_csv
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.support.modes import ALL_MODES, Mode, give_to, offered, open_folder, runner
from tests.support.processes import marked

pytestmark = pytest.mark.slow  # a hostile class graded in every mode

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ADA_SECRET = f"ADA-SECRET-{secrets.token_hex(6)}"  # in ada's hand-in only
PREVIOUS = f"PREVIOUS-GRADES-{secrets.token_hex(6)}"  # in the grades.csv of an earlier run
DAEMON = f"{secrets.randbelow(10**6)}.31"  # the vandal daemon's name: sh -c LOOP <this>
FORKS = f"{secrets.randbelow(10**6)}.47"  # what each of the 300 children sleeps
UNDECODABLE = os.fsdecode(b"caf\xe9-hand-in")
FORMULA = "=1+2"


# Each hand-in of the class, by name, and how it is made.
HAND_INS: dict[str, Callable[[Path], object]] = {
    "ada": lambda f: make.with_marker(f, ADA_SECRET),
    "ben": make.starter_copy,
    "daemon": lambda f: make.with_region_code(f, make.vandal_daemon(DAEMON)),
    "forger": lambda f: make.with_region_code(f, make.FORGED_EVENTS),
    "patcher": lambda f: make.with_region_code(f, make.KIT_CLASS_PATCH),
    "flood": lambda f: make.with_region_code(f, make.STDERR_FLOOD),
    "zero": make.with_links_to_dev_zero,
    "bomb.zip": lambda f: make.zip_bomb(f, 100 * 1024 * 1024),
    "ansi": make.with_ansi_exception,
    "borrower": lambda f: make.with_region_code(f, make.borrowing_solution(REPO_ROOT)),
    "liar": lambda f: make.with_region_code(f, make.KIT_ALLOWLIST),
    "snoop": lambda f: make.with_region_code(f, make.snooping([ADA_SECRET, PREVIOUS])),
    "hog": lambda f: make.with_region_code(f, make.memory_hog(3, 700)),
    "forker": lambda f: make.with_region_code(f, make.fork_storm(300, FORKS)),
    "stub": make.with_stub_hiding_errors,
    "silencer": make.with_silenced_typecheck,
    "flaskstub": make.with_flask_stub,
    FORMULA: make.starter_copy,
    UNDECODABLE: make.with_undecodable_names,
    "deep": lambda f: make.with_deep_folder(f, 1200),
    "wide": lambda f: make.with_empty_folders(f, 60_000),
}


@dataclass
class ClassRun:
    """One mode's grading of the class: what the command said and wrote."""

    mode: Mode
    returncode: int
    stdout: str
    stderr: str
    rows: dict[str, dict[str, str]]
    files: dict[str, str]  # grades.csv and grades.md, as written
    victim: Path  # a file the grades.md link pointed at, which must stay as it was

    @property
    def refused(self) -> bool:
        """Whether grading refused for want of a sandbox (the one clear answer as user-none)."""
        return self.mode.name == "user-none"


def build_class(root: Path) -> list[Path]:
    """Every hand-in, in order, under root."""
    root.mkdir()
    for name, build in HAND_INS.items():
        build(root / name)
    return [root / name for name in HAND_INS]


def read_run(
    mode: Mode, done_code: int, out: str, err: str, folder: Path, victim: Path
) -> ClassRun:
    """The run's table, CSV rows and files (none when it refused)."""
    files, rows = {}, {}
    for name in ("grades.csv", "grades.md"):
        path = folder / name
        if path.is_file() and not path.is_symlink():
            files[name] = path.read_text(encoding="utf-8")
    if "grades.csv" in files:
        with (folder / "grades.csv").open(encoding="utf-8-sig", newline="") as table:
            rows = {row["submission"]: row for row in csv.DictReader(table)}
    return ClassRun(mode, done_code, out, err, rows, files, victim)


MODES = [
    pytest.param(m, id=m.name, marks=pytest.mark.skipif(bool(offered(m)), reason=offered(m)))
    for m in ALL_MODES
]


@pytest.fixture(scope="module")
def hostile_class() -> Iterator[list[Path]]:
    """The class's hand-ins, built once for every mode.

    Grading takes each hand-in in (copies it to scratch space) before any of
    its code runs, so the folders graded in one mode are as built in the next;
    60,000 empty folders cost more to make and remove than most gradings.
    """
    root = open_folder("lab-attacks-class-")
    try:
        yield build_class(root / "class")
    finally:
        remove_tree(root)


@pytest.fixture(scope="module", params=MODES)
def graded(request: pytest.FixtureRequest, hostile_class: list[Path]) -> Iterator[ClassRun]:
    """The hostile class, graded once in one mode, its output folder prepared as attacks find it.

    The class is the mode's user's, as a class folder it was handed; the output
    folder holds an earlier run's grades.csv (written as the grader writes it),
    and a link planted at grades.md that points at a victim file.
    """
    mode: Mode = request.param
    with runner(mode) as run:
        root = open_folder("lab-attacks-")
        try:
            out = root / "out"
            out.mkdir(mode=0o700)
            write_csv([Grade(PREVIOUS)], out / "grades.csv")
            victim = root / "victim.txt"
            victim.write_text("the instructor's own file\n", encoding="utf-8")
            (out / "grades.md").symlink_to(victim)
            give_to(root, run.uid)
            class_folder = hostile_class[0].parent
            give_to(class_folder.parent, run.uid)
            os.chmod(class_folder, 0o700)
            done = run.python(
                "-m",
                "labs",
                "grade",
                *map(str, hostile_class),
                "--out",
                str(out),
                "--timeout",
                "10",
                timeout=900,
            )
            yield read_run(mode, done.returncode, done.stdout, done.stderr, out, victim)
        finally:
            remove_tree(root)


def row(run: ClassRun, name: str) -> dict[str, str] | None:
    """One hand-in's row; None (having checked the refusal) where grading rightly refused."""
    if run.refused:
        assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
        assert "refusing to grade" in run.stderr and "--unsafe-no-sandbox" in run.stderr
        assert set(run.rows) == {PREVIOUS}  # the earlier run's grades, untouched
        return None
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.rows[name]


def passing(found: dict[str, str]) -> set[int]:
    """The memory checks a row passed."""
    return {n for n in range(1, 7) if found[str(n)] == "pass"}


def score(found: dict[str, str]) -> int:
    """The row's score."""
    return int(found["score"])


def test_the_honest_hand_ins_are_graded_as_if_alone(graded: ClassRun) -> None:
    """Beside every attack, the solved tree passes all six and the starter 1, 2 and 6."""
    ada, ben = row(graded, "ada"), row(graded, "ben")
    if ada is None or ben is None:
        return
    assert passing(ada) == {1, 2, 3, 4, 5, 6} and ada["types"] == "pass"
    assert passing(ben) == {1, 2, 6}
    # Neither has a migration: on Postgres (the grader's own cluster) each says so, and no more.
    for found in (ada, ben):
        assert found["review"] == ""
        assert found["note"].startswith("on Postgres: no migration of the tree's own"), found
        assert found["note"].count("; ") == 0, found


def test_a_setsid_daemon_dies_with_its_submission(graded: ClassRun) -> None:
    """The import hangs and its vandal daemon (double fork, setsid) is gone after grading."""
    found = row(graded, "daemon")
    if found is None:
        return
    assert passing(found) == set()
    assert marked(DAEMON) == []


def test_events_forged_from_a_region_do_not_score(graded: ClassRun) -> None:
    """Lines written to every pipe at import, then an exit, earn nothing the tree did not earn."""
    found, ben = row(graded, "forger"), row(graded, "ben")
    if found is None or ben is None:
        return
    assert passing(found) <= {1, 2, 6}
    assert score(found) <= score(ben)


def test_a_kit_class_patched_from_a_region_is_honest_and_needs_review(graded: ClassRun) -> None:
    """CheckResult.passed made always-true in the host changes no verdict, and it is flagged."""
    found = row(graded, "patcher")
    if found is None:
        return
    assert passing(found) == {1, 2, 6}
    assert found["review"] == "needs review"
    assert "imports labs.checking.result" in found["note"]


def test_a_stderr_flood_is_graded_honestly(graded: ClassRun) -> None:
    """100 MB on stderr at every import changes nothing: checks 1, 2 and 6 pass."""
    found = row(graded, "flood")
    if found is not None:
        assert passing(found) == {1, 2, 6}


def test_links_to_dev_zero_are_named_and_never_read(graded: ClassRun) -> None:
    """The links are left out with a note; the tree is graded as the starter it is."""
    found = row(graded, "zero")
    if found is None:
        return
    assert passing(found) == {1, 2, 6}
    assert "zero -> /dev/zero" in found["note"]


def test_a_zip_bomb_is_refused_with_a_clear_note(graded: ClassRun) -> None:
    """A 100 MB entry packed small is refused before it unpacks: zero, and the reason."""
    found = row(graded, "bomb")
    if found is None:
        return
    assert score(found) == 0
    assert "could not grade: more than 64 MB" in found["note"]


def test_terminal_escapes_reach_no_output(graded: ClassRun) -> None:
    """The table, the CSV and the Markdown carry the learner's text without its escapes."""
    found = row(graded, "ansi")
    if found is None:
        return
    for name, text in {"table": graded.stdout, **graded.files}.items():
        assert not CONTROL.search(text.replace("\r\n", "\n").replace("\n", "")), name


def test_the_solution_cannot_be_borrowed(graded: ClassRun) -> None:
    """Region code that swaps the tree's modules for the solution's finds no solution to take."""
    found, ben = row(graded, "borrower"), row(graded, "ben")
    if found is None or ben is None:
        return
    assert passing(found) == {1, 2, 6}
    assert found["review"] == "needs review" and "imports importlib" in found["note"]


def test_a_region_that_takes_the_kits_answer_needs_review(graded: ClassRun) -> None:
    """The kit's own allowlist, imported into the region, passes check 4 only with a flag on it."""
    found = row(graded, "liar")
    if found is None:
        return
    assert found["review"] == "needs review"
    assert "shared/states.py" in found["note"] and "imports labs.lesson.states" in found["note"]


def test_classmates_and_earlier_grades_are_out_of_sight(graded: ClassRun) -> None:
    """Following every path in every argv, a hand-in reads no classmate's work and no grades."""
    found = row(graded, "snoop")
    if found is None:
        return
    assert "snooped: nothing" in found["note"], found["note"]
    assert ADA_SECRET not in found["note"] and PREVIOUS not in found["note"]


def test_the_snoop_finds_what_it_can_read(tmp_path: Path) -> None:
    """Unsandboxed, the snoop finds a marker under a path in another process's argv, past its traps.

    Without this, "snooped: nothing" above could mean the snoop never looked.
    """
    marker = f"READABLE-{secrets.token_hex(6)}"
    named = tmp_path.joinpath(*"12345678")  # deeper than other processes' paths: searched first
    (named / "crowd").mkdir(parents=True)
    for n in range(600):
        (named / "crowd" / f"f{n}").write_text("", encoding="utf-8")
    make.with_deep_folder(named / "deep", 40)
    (named / "class" / "ada" / "tree" / "shared").mkdir(parents=True)
    (named / "class" / "ada" / "tree" / "shared" / "keys.py").write_text(marker)
    (tmp_path / "snoop.py").write_text(make.snooping([marker, PREVIOUS]), encoding="utf-8")
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(named)])
    try:
        done = subprocess.run(
            [sys.executable, "-I", str(tmp_path / "snoop.py")],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        sibling.kill()
        sibling.wait()
    assert f"snooped: {marker}" in done.stderr, done.stderr[-2000:]


def test_children_that_fill_memory_together_stop_the_submission(graded: ClassRun) -> None:
    """Three children of 700 MB each, under every per-process limit, pass the 1 GB cap together."""
    found = row(graded, "hog")
    if found is None:
        return
    assert passing(found) == set()
    assert "the submission was stopped" in found["note"] and "MB of memory" in found["note"]


def test_forking_past_the_cap_stops_the_submission(graded: ClassRun) -> None:
    """300 forks at import: the submission is stopped at its process cap and nothing survives."""
    found = row(graded, "forker")
    if found is None:
        return
    assert passing(found) == set()
    assert "the submission was stopped" in found["note"] and "processes" in found["note"]
    assert marked(FORKS) == []


def test_a_stub_beside_a_module_hides_no_type_error(graded: ClassRun) -> None:
    """keys.pyi beside a keys.py with a type error: the typecheck still fails, the stub is named."""
    found = row(graded, "stub")
    if found is None:
        return
    assert found["types"] == "fail"
    assert "shared/keys.pyi:1: a new file" in found["note"]


def test_a_mypy_comment_in_a_region_silences_nothing(graded: ClassRun) -> None:
    """`# mypy: ignore-errors` at column 0 in a region: the errors count, and it needs review."""
    found = row(graded, "silencer")
    if found is None:
        return
    assert found["types"] == "fail"
    assert found["review"] == "needs review" and "steers the typecheck" in found["note"]


def test_a_flask_stub_in_one_hand_in_costs_no_classmate(graded: ClassRun) -> None:
    """flask/__init__.pyi in one hand-in: its classmates typecheck as before, and so does it."""
    found, ada, ben = row(graded, "flaskstub"), row(graded, "ada"), row(graded, "ben")
    if found is None or ada is None or ben is None:
        return
    assert ada["types"] == "pass"
    assert found["types"] == ben["types"]
    assert "flask/__init__.pyi:1: a new file" in found["note"]


def test_a_cell_that_would_be_a_formula_is_written_as_text(graded: ClassRun) -> None:
    """A hand-in named =1+2 is a text cell in grades.csv; no line of the file starts a formula."""
    found = row(graded, "'" + FORMULA)
    if found is None:
        return
    assert "'=1+2" in graded.files["grades.csv"]
    assert not any(
        line.startswith(("=", "+", "-", "@")) for line in graded.files["grades.csv"].splitlines()
    )


def test_names_that_are_not_utf8_come_out_escaped(graded: ClassRun) -> None:
    """A hand-in (and a file in it) named in bytes that are not UTF-8: escaped, the table whole."""
    found = row(graded, "caf\\xe9-hand-in")
    if found is None:
        return
    assert passing(found) == {1, 2, 6}
    assert "caf\\xe9-hand-in" in graded.files["grades.md"]
    assert len(graded.rows) == len(HAND_INS)


@pytest.mark.parametrize(
    ("name", "why"),
    [("deep", "folders nested more than 24 deep"), ("wide", "more than 500 folders")],
)
def test_a_folder_too_deep_or_too_many_is_refused_at_intake(
    graded: ClassRun, name: str, why: str
) -> None:
    """A 1,200-deep folder and 60,000 empty ones are refused with a note; the table comes out."""
    found = row(graded, name)
    if found is None:
        return
    assert score(found) == 0 and f"could not grade: {why}" in found["note"]


def test_a_planted_link_is_replaced_never_written_through(graded: ClassRun) -> None:
    """grades.md was a link to another file: the file is as it was, grades.md a file of its own."""
    if row(graded, "ben") is None:
        assert graded.victim.read_text(encoding="utf-8") == "the instructor's own file\n"
        return
    assert graded.victim.read_text(encoding="utf-8") == "the instructor's own file\n"
    assert "| ben |" in graded.files["grades.md"]
    assert PREVIOUS not in graded.files["grades.csv"]


def test_nothing_the_class_started_is_still_running(graded: ClassRun) -> None:
    """After grading, no daemon or child of any hand-in is left on the machine."""
    time.sleep(0.2)
    assert marked(DAEMON) == [] and marked(FORKS) == []
