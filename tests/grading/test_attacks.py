"""A hostile class: each attack gets its honest grade or a clear "could not grade", never more.

The attacks are graded in one batch, two at a time, beside two honest
submissions (a solved one and the untouched starter) whose grades must come
out as if they had been graded alone.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from labs.grading.batch import grade_all
from labs.grading.criteria import Grade
from labs.grading.results import results_json
from labs.grading.summary import table_lines, write_csv, write_markdown
from tests.grading import submissions as make

TIMEOUT = 10.0
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ROOT = os.geteuid() == 0
ORDER = [
    "daemon",
    "ada",
    "forger",
    "patcher",
    "flood",
    "zero",
    "bomb.zip",
    "ansi",
    "ben",
]


@pytest.fixture(scope="module")
def open_dir() -> Iterator[Path]:
    """A folder any user may write in, for the daemon's heartbeat."""
    folder = Path(tempfile.mkdtemp(prefix="lab-attack-beat-"))
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory: pytest.TempPathFactory, open_dir: Path) -> dict[str, Grade]:
    """Every attack, and two honest hand-ins, graded together."""
    root = tmp_path_factory.mktemp("hostile")
    make.with_region_code(root / "daemon", make.escaping_daemon(open_dir / "beat"))
    make.fixed(root / "ada")
    make.with_region_code(root / "forger", make.FORGED_EVENTS)
    make.with_region_code(root / "patcher", make.KIT_CLASS_PATCH)
    make.with_region_code(root / "flood", make.STDERR_FLOOD)
    make.with_links_to_dev_zero(root / "zero")
    make.zip_bomb(root / "bomb.zip", 100 * 1024 * 1024)
    make.with_ansi_exception(root / "ansi")
    make.starter_copy(root / "ben")
    grades = grade_all([root / name for name in ORDER], jobs=2, timeout=TIMEOUT)
    return {grade.submission: grade for grade in grades}


def memory(grade: Grade) -> dict[int, str]:
    """pass/fail of the six checks on memory."""
    return {n: grade.outcomes[f"memory-{n}"].status for n in range(1, 7)}


def passing(*checks: int) -> dict[int, str]:
    """The six checks' results when exactly these pass."""
    return {n: "pass" if n in checks else "fail" for n in range(1, 7)}


def test_the_honest_hand_ins_are_graded_as_if_alone(hostile_class: dict[str, Grade]) -> None:
    """Beside the attacks, the solved tree passes all six and the starter 1, 2 and 6."""
    assert memory(hostile_class["ada"]) == passing(1, 2, 3, 4, 5, 6)
    assert memory(hostile_class["ben"]) == passing(1, 2, 6)
    assert hostile_class["ada"].note == ""
    assert hostile_class["ben"].note == ""


def test_events_forged_from_a_region_do_not_score(hostile_class: dict[str, Grade]) -> None:
    """Lines written to every pipe at import, then an exit, earn nothing the tree did not earn."""
    grade = hostile_class["forger"]
    assert memory(grade) in (passing(1, 2, 6), passing())
    assert grade.score <= hostile_class["ben"].score


def test_a_kit_class_patched_from_a_region_gets_the_honest_grade(
    hostile_class: dict[str, Grade],
) -> None:
    """CheckResult.passed made always-true in the host changes no verdict: the starter's grade."""
    grade, ben = hostile_class["patcher"], hostile_class["ben"]
    assert memory(grade) == passing(1, 2, 6)
    for key, outcome in grade.outcomes.items():
        if key != "typecheck":  # the patch itself may not typecheck
            assert outcome.status == ben.outcomes[key].status, key
    assert grade.score <= ben.score


def test_a_daemon_that_outlives_its_timeout_harms_no_one(
    hostile_class: dict[str, Grade], open_dir: Path
) -> None:
    """The import hangs and times out; its escaped daemon is dead and the others are intact."""
    grade = hostile_class["daemon"]
    assert memory(grade) == passing()  # it may only spoil its own events
    assert grade.score <= hostile_class["ben"].score
    assert memory(hostile_class["ada"]) == passing(1, 2, 3, 4, 5, 6)
    if not ROOT:
        pytest.skip("without root the daemon's setsid escapes the process group")
    beat = open_dir / "beat"  # the daemon writes it every 0.1 s for as long as it lives
    assert beat.exists()  # it did run, and outlived the host it forked from
    before = beat.read_text()
    time.sleep(0.5)
    assert beat.read_text() == before


def test_a_stderr_flood_is_graded_honestly(hostile_class: dict[str, Grade]) -> None:
    """100 MB on stderr at every import changes nothing: checks 1, 2 and 6 pass."""
    grade = hostile_class["flood"]
    assert memory(grade) == passing(1, 2, 6)


def test_links_to_dev_zero_are_named_and_never_read(hostile_class: dict[str, Grade]) -> None:
    """The links are left out with a note; the tree is graded as the starter it is."""
    grade = hostile_class["zero"]
    assert memory(grade) == passing(1, 2, 6)
    assert "zero -> /dev/zero" in grade.note
    assert "starter/shared/zero.py -> /dev/zero" in grade.note


def test_a_zip_bomb_is_refused_with_a_clear_note(hostile_class: dict[str, Grade]) -> None:
    """A 100 MB entry packed small is refused before it unpacks: zero, and the reason."""
    grade = hostile_class["bomb"]
    assert grade.score == 0
    assert "could not grade: more than 64 MB" in grade.broken


def test_terminal_escapes_in_an_exception_reach_no_output(
    hostile_class: dict[str, Grade], tmp_path: Path
) -> None:
    """The table, the CSV, the Markdown and results.json carry the text without its escapes."""
    grade = hostile_class["ansi"]
    assert grade.score <= hostile_class["ben"].score
    grades = list(hostile_class.values())
    write_csv(grades, tmp_path / "grades.csv")
    write_markdown(grades, tmp_path / "grades.md")
    written = {
        "table": "\n".join(table_lines(grades)),
        "csv": (tmp_path / "grades.csv").read_text(encoding="utf-8"),
        "markdown": (tmp_path / "grades.md").read_text(encoding="utf-8"),
        "results.json": json.dumps(results_json(grade), ensure_ascii=False),
    }
    for name, text in written.items():
        assert not CONTROL.search(text.replace("\r\n", "\n").replace("\n", "")), name
    assert "ada  110  110  ok ok ok" in written["results.json"]
    with (tmp_path / "grades.csv").open(encoding="utf-8", newline="") as rows:
        assert len(list(csv.reader(rows))) == len(grades) + 1
