"""Feedback names the learner's own files, from the top of the hand-in, never a grader's copy."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from labs.grading.batch import grade_all
from labs.grading.criteria import CRITERIA, Grade
from labs.grading.feedback import write_class_feedback
from labs.grading.places import tree_places
from labs.grading.summary import table_lines, write_csv, write_markdown
from tests.grading import submissions as make
from tests.grading.conftest import TIMEOUT

# Every folder the grader keeps a copy in, and the name it gives a tree it copies.
GRADER_FOLDERS = re.compile(r"lab-(?:spliced|sandbox|class|taken)-|graded_s\d")
LABELS = ("expected: ", "got:      ", "hint:     ")

SCRATCH = Path("/tmp/lab-class-x1/s0")
COPY = SCRATCH / "graded_s0_wei"  # `labs grade` copies the tree here, under a name of its own
SPLICED = Path("/tmp/lab-spliced-k2/graded_s0_wei")
SANDBOX = "/tmp/lab-sandbox-q3"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            f"hint:     {SPLICED}/shared/keys.py:14  TODO(check 3): hash",
            "hint:     work/starter/shared/keys.py:14  TODO(check 3): hash",
        ),
        (
            f'File "{SANDBOX}/graded_s0_wei/shared/keys.py", line 3, in key',
            'File "work/starter/shared/keys.py", line 3, in key',
        ),
        (
            "graded_s0_wei/shared/keys.py:3: error: Incompatible types",
            "work/starter/shared/keys.py:3: error: Incompatible types",
        ),
        (f"(at {COPY}/infra/memory.py:9)", "(at work/starter/infra/memory.py:9)"),
        (
            "(at lab-class-x1/s0/graded_s0_wei/gateway/routes.py:7)",
            "(at work/starter/gateway/routes.py:7)",
        ),
        (
            f"no migration found in {SCRATCH}/migrations/versions/graded_s0_wei: generate one",
            "no migration found in work/migrations/versions/starter: generate one",
        ),
        (f"{SANDBOX}/versions/0001_mine.py", "work/migrations/versions/starter/0001_mine.py"),
        ("graded_s0_wei_old/keys.py and plain words", "graded_s0_wei_old/keys.py and plain words"),
    ],
    ids=[
        "spliced",
        "sandbox",
        "mypy",
        "copy",
        "copy-from-here",
        "migrations",
        "migration-in-sandbox",
        "others",
    ],
)
def test_a_path_into_any_copy_is_shown_from_the_top_of_the_hand_in(text: str, shown: str) -> None:
    """Hints, tracebacks, mypy's lines and the migration folder all name the hand-in's files."""
    places = tree_places(
        COPY,
        SCRATCH / "migrations" / "versions" / COPY.name,
        [SPLICED],
        shown_as="work/starter",
        hand_in=SCRATCH / "submission",
    )
    assert places.shown(text) == shown


def test_a_migration_handed_in_is_named_where_the_learner_put_it() -> None:
    """The migration folder found in the hand-in is shown from the hand-in's top."""
    hand_in = SCRATCH / "submission"
    versions = hand_in / "lab" / "migrations" / "versions" / "starter"
    places = tree_places(COPY, versions, [SPLICED], shown_as="lab/starter", hand_in=hand_in)
    assert places.shown(f"the migration failed in {versions}/0001.py") == (
        "the migration failed in lab/migrations/versions/starter/0001.py"
    )
    assert places.shown(f"{SANDBOX}/versions/0001.py") == "lab/migrations/versions/starter/0001.py"


def test_a_tree_at_the_top_of_the_hand_in_is_named_by_its_files_alone() -> None:
    """A hand-in that is the tree itself: shared/keys.py, no folder before it."""
    places = tree_places(COPY, SCRATCH / "m", [SPLICED], shown_as="", hand_in=SCRATCH / "s")
    assert places.shown(f"hint:     {SPLICED}/shared/keys.py:14") == "hint:     shared/keys.py:14"


def test_a_tree_graded_where_it_lies_is_named_by_its_folder(tmp_path: Path) -> None:
    """The pytest entry grades the learner's own starter/: its copies are named starter/."""
    tree = tmp_path / "course" / "starter"
    spliced = Path("/tmp/lab-spliced-a1/starter")
    places = tree_places(tree, tree.parent / "migrations" / "versions" / "starter", [spliced])
    assert places.shown(f"{spliced}/shared/keys.py:14") == "starter/shared/keys.py:14"
    assert places.shown(f"{SANDBOX}/starter/shared/keys.py:3") == "starter/shared/keys.py:3"
    assert places.shown(f"{tree}/shared/keys.py:1") == "starter/shared/keys.py:1"
    assert places.shown(f"in {tree.parent}/migrations/versions/starter: make one") == (
        "in migrations/versions/starter: make one"
    )


@dataclass
class Graded:
    """One hand-in graded by the class grader, and everything it wrote about it."""

    grade: Grade
    out: Path
    table: list[str]

    def files(self) -> dict[str, str]:
        """Every file written, by its path under out."""
        return {
            path.relative_to(self.out).as_posix(): path.read_text(encoding="utf-8-sig")
            for path in sorted(self.out.rglob("*"))
            if path.is_file()
        }

    def file(self, name: str) -> str:
        """One file of the learner's feedback folder."""
        (folder,) = (self.out / "submissions").iterdir()
        return (folder / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wei(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    """A hand-in whose tree is work/starter, with a type error in check 3's region, graded."""
    root = tmp_path_factory.mktemp("hand-ins")
    tree = make.starter_copy(root / "王伟" / "work")
    make.replace_in(
        tree / "shared" / "keys.py", r"(    # TODO\(check 3\)[^\n]*\n)", r'\1    wrong: int = "x"\n'
    )
    (grade,) = grade_all([root / "王伟"], timeout=TIMEOUT, database_url=None)
    out = root / "out"
    out.mkdir()
    write_csv([grade], out / "grades.csv")
    write_markdown([grade], out / "grades.md")
    write_class_feedback([grade], out)
    return Graded(grade, out, table_lines([grade]))


@pytest.mark.slow
def test_no_output_names_a_folder_of_the_graders(wei: Graded) -> None:
    """The table, the CSV, grades.md, report.md, results.json and JUnit: no grader's folder."""
    texts = {"table": "\n".join(wei.table), **wei.files()}
    texts |= {key: o.message + o.output for key, o in wei.grade.outcomes.items()}
    assert {name: GRADER_FOLDERS.findall(text) for name, text in texts.items()} == {
        name: [] for name in texts
    }
    assert len(texts) > 6


@pytest.mark.slow
def test_each_hint_names_the_file_from_the_top_of_the_hand_in(wei: Graded) -> None:
    """starter/shared/keys.py:14 inside work/: the hint says work/starter/shared/keys.py:14."""
    hints = [
        line.removeprefix("hint:     ")
        for outcome in wei.grade.outcomes.values()
        for line in outcome.message.splitlines()
        if line.startswith("hint:     ")
    ]
    assert hints and all(hint.startswith("work/starter/") for hint in hints), hints
    assert "no migration found in work/migrations/versions/starter:" in (
        wei.grade.outcomes["migration"].message
    )


@pytest.mark.slow
def test_expected_got_and_hint_are_lines_of_their_own_in_every_file(wei: Graded) -> None:
    """report.md, results.json's message and JUnit's failure: a line each, none run together."""
    results = json.loads(wei.file("results.json"))
    junit = ET.fromstring(wei.file("junit.xml").encode())
    failed_checks = [  # those that ran and failed (not Postgres's, with no migration to run on)
        c
        for c in CRITERIA
        if c.check is not None
        and wei.grade.outcomes[c.key].status == "fail"
        and wei.grade.outcomes[c.key].ran
    ]
    assert failed_checks
    texts = {
        "report.md": wei.file("report.md"),
        **{f"results.json {t['name']}": t["message"] for t in results["tests"] if t["message"]},
        **{f"junit {f.get('message')}": f.text or "" for f in junit.iter("failure")},
    }
    for name, text in texts.items():
        if "expected: " not in text:
            continue
        lines = text.splitlines()
        for label in LABELS[:2]:
            joined = [line for line in lines if label in line and not line.startswith(label)]
            assert joined == [], (name, label)
    report = texts["report.md"].splitlines()
    for label in LABELS[:2]:
        assert sum(line.startswith(label) for line in report) == len(failed_checks), label
    assert any(line.startswith(LABELS[2]) for line in report)


@pytest.mark.slow
def test_a_failed_typecheck_shows_mypys_own_lines_in_the_report(wei: Graded) -> None:
    """Not only "1 type error(s)": mypy's line, naming the learner's file, in report.md."""
    assert wei.grade.outcomes["typecheck"].status == "fail"
    report = wei.file("report.md")
    assert re.search(
        r"^work/starter/shared/keys\.py:\d+: error: Incompatible types in assignment",
        report,
        flags=re.M,
    ), report
