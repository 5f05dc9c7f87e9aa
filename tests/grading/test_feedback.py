"""Learners see what the grader sees: the points after the checks, and a folder per submission."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from labs.checking.report import Report
from labs.checking.result import CheckResult
from labs.checking.results_json import write_results
from labs.checking.runner import run_checks
from labs.grading.criteria import CRITERIA, MEMORY_POINTS, Grade, Outcome
from labs.grading.errors import OutputError
from labs.grading.feedback import folder_names, junit_xml, markdown_report, write_feedback
from labs.grading.grader import Grader
from labs.grading.results import Tally, results_json, score_lines
from labs.grading.server_choice import chosen_server
from labs.review.rerun import watch_tree
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree
from tests.grading import submissions as make
from tests.grading.test_plugin import grade_with_pytest

FINAL = "3 passed, 3 failed"


def lab(*args: str) -> subprocess.CompletedProcess[str]:
    """python -m labs ARGS from the repository root, without a database, in English."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_LANG", "LANG")}
    env |= {"PYTHONIOENCODING": "utf-8", "LANGUAGE": "en", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "labs", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def a_grade() -> Grade:
    """A grade with a pass, a fail whose texts would break XML and Markdown, and a skip."""
    grade = Grade("ada")
    grade.outcomes["memory-1"] = Outcome("pass")
    grade.outcomes["memory-3"] = Outcome(
        "fail",
        "expected: one run\ngot:      two ```runs``` \x0b<&>\n"
        "hint:     shared/keys.py:24  TODO(check 3)",
        "client -> gateway POST /chat",
    )
    grade.outcomes["postgres-1"] = Outcome("skip", "no database configured")
    return grade


def test_labs_check_ends_with_the_points_the_grader_gives_then_the_totals_line() -> None:
    """The starter's points are the grader's: memory over what ran, then the grader's own
    typecheck and migration verdicts; Postgres, not run, says so with the command."""
    done = lab("check", "--tree", "starter")
    lines = done.stdout.splitlines()
    assert done.returncode == 1 and lines[-1] == FINAL
    grader = Grader(tree_root("starter"))
    memory = [c for c in CRITERIA if c.kind == "memory"]
    earned = sum(c.points for c in memory if grader.outcome(c).passed)
    assert earned == 3 * MEMORY_POINTS
    block = lines[lines.index("points as `labs grade` would give them:") : -1]
    assert f"  memory: {earned} / {len(memory) * MEMORY_POINTS}" in block
    assert "  typecheck: 10 / 10" in block and "  migration: 0 / 10" in block
    # On the grader's own Postgres (the server binaries are here), as the grader grades it.
    assert "  Postgres: 0 / 30" in block
    why = next(line for line in block if "no migration found" in line)
    assert "migrations/versions/starter" in why and "solution" not in why
    assert f"  total: {earned + 10} / {len(memory) * MEMORY_POINTS + 50}" in block
    assert not [line for line in block if "not graded here" in line]


def selftest_lines(tree: Path, state: Path, **env: str) -> list[str]:
    """SELFTEST=1 python -m TREE on memory, from the tree's folder, with its own state folder."""
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_LANG", "LANG")}
    clean |= {"MOCK": "1", "SELFTEST": "1", "PYTHONIOENCODING": "utf-8", "LANGUAGE": "en"}
    clean |= {"LAB_STATE_DIR": str(state), "COLUMNS": "200", **env}
    done = subprocess.run(
        [sys.executable, "-m", tree.name],
        cwd=tree.parent,
        env=clean,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.stdout.splitlines(), done.stderr
    return done.stdout.splitlines()


def graders_total(tree: Path) -> str:
    """The total line the grader prints for the tree, on the Postgres it chooses by default."""
    grade = Grader(tree, database_url=chosen_server()).grade()
    (total,) = [line for line in Tally.of_grade(grade).lines() if line.startswith("  total: ")]
    return total


@pytest.mark.parametrize("kind", ["starter", "solved", "type error", "bad migration"])
def test_the_typecheck_and_the_migration_count_in_the_self_checks_total_as_graded(
    tmp_path: Path, kind: str
) -> None:
    """Issue 21: the typecheck and the migration count in the self-check's total as the grader
    counts them, whichever way each goes; a second run on the unchanged tree gives the same."""
    if kind == "starter":
        tree = make.starter_copy(tmp_path / "hand-in")
    else:
        tree = make.fixed(tmp_path / "hand-in") / "starter"
        make.with_full_migration(tree)
    if kind == "type error":
        make.replace_in(
            tree / "shared" / "keys.py",
            r"(    # TODO\(check 3\)[^\n]*\n)",
            r'\1    wrong: int = "text"\n',
        )
    if kind == "bad migration":
        (script,) = (tree.parent / "migrations" / "versions" / "starter").glob("*.py")
        make.replace_in(script, r"sa\.UniqueConstraint\([^)]*seq[^)]*\),?", "")
    expected = graders_total(tree)
    state = tmp_path / "state"
    for _ in range(2):
        lines = selftest_lines(tree, state)
        assert expected in lines, (expected, lines)
    want = {"starter": "40 / 110", "solved": "110 / 110", "type error": "100 / 110"}
    assert kind not in want or expected == f"  total: {want[kind]}"
    if kind == "bad migration":
        assert "  migration: 0 / 10" in lines


def test_a_verdict_is_kept_for_the_tree_it_was_given_and_never_for_another(tmp_path: Path) -> None:
    """The kept typecheck is keyed by the tree's files: an edit that breaks the types is
    type-checked afresh, not answered from the verdict the unedited tree got."""
    tree = make.starter_copy(tmp_path / "hand-in")
    state = tmp_path / "state"
    assert "  typecheck: 10 / 10" in selftest_lines(tree, state)
    assert any(state.rglob("verdicts.json"))
    make.replace_in(
        tree / "shared" / "keys.py", r"(    # TODO\(check 3\)[^\n]*\n)", r'\1    wrong: int = "x"\n'
    )
    lines = selftest_lines(tree, state)
    assert "  typecheck: 0 / 10" in lines and "  total: 30 / 110" in lines


def test_the_points_count_what_ran_and_name_what_did_not() -> None:
    """A Postgres run counts on its own line, over the checks that ran; the checks it left out
    and memory, not run, are named with their points; a tree that does not import scores 0."""
    results = [CheckResult(str(n), n, "t", passed=n != 3) for n in (1, 2, 3)]
    lines = score_lines({"postgres": Report("starter", "postgres", results)}, "mine")
    assert "  Postgres: 10 / 15" in lines and "  total: 10 / 15" in lines
    assert any(
        line.startswith("  not graded here: checks 4, 5, 6 on Postgres (15 points): ")
        for line in lines
    )
    memory = "  not graded here: memory (60 points): run it with python -m labs check --tree mine"
    assert memory in lines
    broken = Report("starter", "memory", [], error="does not import")
    assert "  memory: 0 / 60" in score_lines({"memory": broken})


def test_watch_shows_the_points_after_each_run(tmp_path: Path) -> None:
    """Each run of watch ends with the points block: memory run here, the rest the grader's."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    out, stop = io.StringIO(), threading.Event()

    def run(root: Path) -> Report:
        return run_checks(root, "memory")

    watcher = threading.Thread(
        target=watch_tree,
        args=(tree, "starter", out, stop),
        kwargs={"poll": True, "run": run, "keys": io.StringIO("q")},
        daemon=True,
    )
    watcher.start()
    watcher.join(timeout=120)
    stop.set()
    shown = out.getvalue()
    assert "memory: 30 / 60" in shown and "Postgres: 0 / 30" in shown
    assert "total: 40 / 110" in shown  # the grader's, Postgres on its own cluster


def test_junit_xml_parses_with_the_counts_and_the_failure_messages() -> None:
    """One test case per criterion graded; failures carry the message; skips are marked."""
    root = ET.fromstring(junit_xml(a_grade()).encode())
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert list(cases) == ["memory-1", "memory-3", "postgres-1"]
    failure = cases["memory-3"].find("failure")
    assert failure is not None and failure.get("message") == "expected: one run"
    assert "TODO(check 3)" in (failure.text or "") and "POST /chat" in (failure.text or "")
    assert cases["postgres-1"].find("skipped") is not None
    scores = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert scores["score"] == "10" and scores["max_score"] == "20"
    three = {p.get("name"): p.get("value") for p in cases["memory-3"].iter("property")}
    assert (three["score"], three["max_score"]) == ("0", "10")


def test_the_markdown_report_lists_the_failing_rows_with_their_hints_fenced() -> None:
    """The failing row and its hint, in a fence no backticks inside can close; passes in brief."""
    text = markdown_report(a_grade())
    assert text.startswith("# ada: 10 / 20 points")
    assert "## check 3 on memory:" in text and "TODO(check 3)" in text
    assert "````\nexpected: one run" in text  # a fence longer than the ``` inside
    assert "Passed: memory-1." in text and "no database configured" in text
    assert "memory-1 (" not in text  # a passing row gets no section


def test_feedback_files_are_written_by_the_one_writer_and_never_through_a_link(
    tmp_path: Path,
) -> None:
    """results.json is results_json(grade); a planted link is replaced, never followed."""
    grade = a_grade()
    folder = write_feedback(grade, tmp_path / "ada")
    assert json.loads((folder / "results.json").read_text()) == json.loads(
        json.dumps(results_json(grade))
    )
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    for name in ("report.md", "results.json"):
        (folder / name).unlink()
        (folder / name).symlink_to(target)
    write_feedback(grade, folder)
    write_results({}, folder / "results.json")
    assert target.read_text() == "keep me"
    assert not (folder / "report.md").is_symlink() and not (folder / "results.json").is_symlink()
    assert (folder / "report.md").read_text() == markdown_report(grade)
    linked = tmp_path / "linked"
    linked.symlink_to(folder)
    with pytest.raises(OutputError, match="link"):
        write_feedback(grade, linked)


NAMES = [
    "张伟",
    "李娜",
    "José Núñez",
    "Jose Nunez",
    "Zoë O'Brien",
    "Иван Петров",
    "🦊",
    "ada",
    "ADA",
    "../ada",
    "..",
    ".hidden",
    "-rf",
    "a/b\\c",
    "a b\u202e",
    "",
    "learner-01",
    "王芳 (Wang Fang)",
]
SAFE_FOLDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def test_feedback_folders_are_safe_unique_and_named_for_the_learner_where_they_can_be() -> None:
    """ASCII without accents, else the learner's place in the class; never a clash or a dot."""
    folders = folder_names(NAMES)
    assert all(SAFE_FOLDER.fullmatch(folder) for folder in folders), folders
    assert len({folder.casefold() for folder in folders}) == len(NAMES)
    shown = dict(zip(NAMES, folders, strict=True))
    assert shown["José Núñez"] == "Jose_Nunez" and shown["Jose Nunez"] == "Jose_Nunez_2"
    assert shown["Zoë O'Brien"] == "Zoe_O_Brien" and shown["王芳 (Wang Fang)"] == "Wang_Fang"
    assert (shown["张伟"], shown["李娜"], shown["🦊"]) == ("learner-01", "learner-02", "learner-07")
    assert shown["Иван Петров"] == "learner-06"
    assert shown["learner-01"] == "learner-01_2"  # a name can never take a place's folder


def test_labs_grade_writes_a_folder_per_submission_beside_the_class_table(
    batch_folder: Path, tmp_path: Path
) -> None:
    """results.json (score, max_score), report.md and junit.xml for each, matching the table."""
    sources = [str(batch_folder / name) for name in ("ben", "cho")]
    done = lab("grade", "--out", str(tmp_path), "--timeout", "10", *sources)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "grades.csv").is_file()
    for name in ("ben", "cho"):
        folder = tmp_path / "submissions" / name
        results = json.loads((folder / "results.json").read_text())
        assert results["version"] == 3
        assert results["score"] == sum(t["score"] for t in results["tests"])
        assert results["max_score"] == sum(t["max_score"] for t in results["tests"])
        # Failed, or could not run (Postgres with no migration): each a JUnit failure.
        failing = [t for t in results["tests"] if t["status"] != "pass"]
        report = (folder / "report.md").read_text()
        assert report.startswith(f"# {name}: {results['score']} / {results['max_score']}")
        for test in failing:
            assert f"## {test['name']}" in report
        suite = ET.parse(folder / "junit.xml").getroot().find("testsuite")
        assert suite is not None
        assert int(suite.get("failures", "-1")) == len(failing)
        # Postgres graded on the grader's own cluster: nothing skipped, every criterion in v3.
        assert int(suite.get("skipped", "-1")) == 0
        assert int(suite.get("tests", "-1")) == len(results["tests"]) == len(CRITERIA)
    ben = (tmp_path / "submissions" / "ben" / "report.md").read_text()
    assert "TODO(check 3)" in ben and "TODO(check 4)" in ben


def test_the_pytest_entry_writes_junit_xml_when_asked(tmp_path: Path) -> None:
    """--junit PATH: the criteria graded as test cases, the failure's message its hint."""
    tree = make.starter_copy(tmp_path / "hand-in")
    junit = tmp_path / "out" / "junit.xml"
    junit.parent.mkdir()
    done = grade_with_pytest(
        tree, tmp_path / "results.json", "--lab-only", "memory-1,memory-3", "--junit", str(junit)
    )
    assert done.returncode == 0, done.stdout[-2000:]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    (failure,) = suite.iter("failure")
    assert "TODO(check 3)" in (failure.text or "")
    assert (failure.get("message") or "").startswith("expected: ")
    assert f"JUnit XML: {junit}" in done.stdout
