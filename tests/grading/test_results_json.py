"""results.json as Exercism's v3 says, and one total for the self-check and the grader.

v3's rules (exercism.org/docs/building/tooling/test-runners/interface): the
document's status is error only when no test ran, and only then does it carry a
top-level message; a test is an error when it could not run, a fail when it
ran and failed; a test's output is what the learner's code printed, at most
500 characters with a note when cut; test_code says what the test does.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from labs.checking.checks import CHECKS
from labs.checking.definition import Check
from labs.checking.pipes import PipeHost
from labs.checking.report import results_v3
from labs.checking.results_json import OUTPUT_LIMIT, capped_output
from labs.checking.runner import run_checks
from labs.grading.batch import broken_grade
from labs.grading.criteria import CRITERIA, Criterion, Grade, Outcome
from labs.grading.platforms import classroom50_result, gradescope_results
from labs.grading.results import results_json
from labs.trees.finding import REPO_ROOT, tree_root
from tests.grading import submissions as make
from tests.grading.mistakes.catalogue import CATALOGUE, Answer, build
from tests.grading.test_plugin import MEMORY, grade_with_pytest

NOTICE = capped_output("x" * (OUTPUT_LIMIT + 1)).rpartition("\n")[2]
PASS, FAIL = Outcome("pass"), Outcome("fail", "expected: a\ngot:      b\nhint:     keys.py:3")
COULD_NOT_RUN = Outcome("fail", "the checks could not run: the tree does not import", ran=False)
MACHINE = Outcome("error", "not graded: the server refused the grader")
SKIP = Outcome("skip", "no database configured")


def document_of(grade: Grade) -> Any:
    """results.json for a grade, as a program reading the file sees it."""
    return json.loads(json.dumps(results_json(grade)))


def grade_of(memory: Outcome, postgres: Outcome, others: Outcome, note: str = "") -> Grade:
    """A grade with one outcome for each kind of criterion, and a note if given."""
    grade = Grade("ada", notes=[note] if note else [])
    for criterion in CRITERIA:
        kind = {"memory": memory, "postgres": postgres}
        grade.outcomes[criterion.key] = kind.get(criterion.kind, others)
    return grade


# (the grade, the document's status v3 gives it)
GRADES = {
    "all passed, with a note": (grade_of(PASS, SKIP, PASS, "edited outside: a.py:1"), "pass"),
    "some failed, with a note": (grade_of(FAIL, SKIP, PASS, "edited outside: a.py:1"), "fail"),
    "the tree did not import, the typecheck ran": (grade_of(COULD_NOT_RUN, SKIP, FAIL), "fail"),
    "the machine failed on Postgres only": (grade_of(PASS, MACHINE, PASS), "fail"),
    "the machine failed on everything": (grade_of(MACHINE, MACHINE, MACHINE), "error"),
    "nothing could run against the tree": (grade_of(COULD_NOT_RUN, SKIP, COULD_NOT_RUN), "error"),
    "a hand-in that could not be taken in": (broken_grade("ada", "not a zip file"), "error"),
}


@pytest.mark.parametrize("case", GRADES)
def test_the_top_level_message_is_there_exactly_when_no_test_ran(case: str) -> None:
    """status is error only when every test is one; message only with error, never beside fail."""
    grade, status = GRADES[case]
    document = document_of(grade)
    statuses = {test["status"] for test in document["tests"]}
    assert document["status"] == status
    assert (document["status"] == "error") == (statuses == {"error"})
    assert (document["status"] == "pass") == (statuses == {"pass"})
    assert ("message" in document) == (status == "error")
    if status == "error":
        assert document["message"]
    assert document["note"] == (grade.note or None)  # an instructor's notes, whatever the status


# (an outcome, the test status v3 gives it, whether it counts in the grade)
VERDICTS = [(PASS, "pass", True), (FAIL, "fail", True), (COULD_NOT_RUN, "error", True)]
VERDICTS += [(MACHINE, "error", False)]


@pytest.mark.parametrize("criterion", CRITERIA, ids=[c.key for c in CRITERIA])
def test_a_test_is_an_error_only_when_it_could_not_run_and_fail_when_it_failed(
    criterion: Criterion,
) -> None:
    """Each verdict on each criterion: a tree that did not import is an error that scores 0 of
    the points; the machine's failure is an error that counts nowhere; a failure is a fail."""
    for outcome, status, counted in VERDICTS:
        document = document_of(Grade("ada", outcomes={criterion.key: outcome}))
        (test,) = document["tests"]
        assert test["status"] == status, outcome
        assert ("max_score" in test) == counted and ("score" in test) == counted
        assert document["max_score"] == sum(t.get("max_score", 0) for t in document["tests"])
        assert document["score"] == sum(t.get("score", 0) for t in document["tests"])
        assert (test["message"] is None) == (status == "pass")


def graded_checks(tree: Path, results: Path) -> Any:
    """results.json of the pinned pytest entry for the six checks on memory and the typecheck."""
    done = grade_with_pytest(tree, results, "--lab-only", f"{MEMORY},typecheck")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(results.read_text(encoding="utf-8"))


def test_the_grader_calls_a_check_an_error_only_when_the_tree_did_not_import(
    tmp_path: Path,
) -> None:
    """The starter's failing checks ran: fail; a tree that does not parse: six errors, and the
    typecheck, which ran, a fail; the document is fail either way, with no message."""
    starter = make.starter_copy(tmp_path / "ran")
    broken = make.with_syntax_error(tmp_path / "broken") / "starter"
    for tree, errors in ((starter, False), (broken, True)):
        document = graded_checks(tree, tmp_path / f"{tree.parent.name}.json")
        checks = [t for t in document["tests"] if "task_id" in t]
        (typecheck,) = [t for t in document["tests"] if "task_id" not in t]
        if errors:
            assert {t["status"] for t in checks} == {"error"}
            assert all("does not import" in t["message"] for t in checks)
            assert typecheck["status"] == "fail"
        else:
            assert {t["status"] for t in checks} == {"pass", "fail"}
            assert typecheck["status"] in ("pass", "fail")
        assert document["status"] == "fail" and "message" not in document


def printing_tree(folder: Path, line: str) -> Path:
    """A starter copy whose key prints `line` each time it is computed (check 3's region)."""
    tree = make.starter_copy(folder)
    make.replace_in(
        tree / "shared" / "keys.py",
        r"(# TODO\(check 3\).*?\n)",
        rf"\1    print({line!r})\n",
    )
    return tree


def printed_only(output: str, line: str) -> None:
    """output is what printed `line` again and again wrote: capped with the notice, or whole."""
    assert len(output) <= OUTPUT_LIMIT
    kept, _newline, last = output.rpartition("\n")
    if last == NOTICE:
        repeated = (line + "\n") * (len(kept) // (len(line) + 1) + 1)
        assert repeated.startswith(kept)
    else:
        assert output.splitlines() == [line] * len(output.splitlines())


@pytest.mark.parametrize("size", [12, 2000])
@pytest.mark.parametrize("entry", ["grader", "labs check --json"])
def test_a_tests_output_is_what_the_learners_code_printed_capped_with_a_notice(
    tmp_path: Path, size: int, entry: str
) -> None:
    """Never the kit's trace: only the region's own lines, at most 500 characters, and when
    cut, Exercism's notice; the kit's expected, got and hint stay in the message."""
    line = "k" * size
    tree = printing_tree(tmp_path / "hand-in", line)
    results = tmp_path / "results.json"
    if entry == "grader":
        done = grade_with_pytest(tree, results, "--lab-only", MEMORY)
    else:
        command = [sys.executable, "-m", "labs", "check", "--tree", str(tree), "--json"]
        done = subprocess.run(
            [*command, str(results)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=240
        )
    assert results.is_file(), done.stdout[-2000:] + done.stderr[-2000:]
    tests = json.loads(results.read_text(encoding="utf-8"))["tests"]
    outputs = [t["output"] for t in tests if t["output"]]
    assert outputs, "the key printed during the checks that post /chat"
    for output in outputs:
        printed_only(output, line)
    if size > OUTPUT_LIMIT:
        assert all(output.endswith("\n" + NOTICE) for output in outputs)
    failed = [t for t in tests if t["status"] == "fail"]
    assert failed and all(t["message"].startswith("expected: ") for t in failed)
    for test in failed:
        assert "\ngot:      " in test["message"] and "\nhint:     " in test["message"]


def test_the_output_of_a_check_is_what_came_since_its_mark_without_the_hosts_stacks() -> None:
    """What came before the check and the stacks the host prints when a call runs late are
    not the learner's: only the lines around them are."""
    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    output_read, output_write = os.pipe()
    host = PipeHost(os.getpid(), requests_write, answers_read, output_read)
    try:
        os.write(output_write, b"imported\n")
        host.mark_output()
        stacks = (
            'Thread 0x00007f0a1b2c3d40 (most recent call first):\n  File "/kit/ops.py", '
            "line 3 in answer\n\nCurrent thread 0x00007f0a1b2c3e50 (most recent call first):\n"
            '  File "/kit/host.py", line 9 in serve\n'
        )
        os.write(output_write, f"mine\n{stacks}after\n".encode())
        assert host.output_since_mark() == "mine\nafter\n"
        assert "Thread 0x" in host.stderr_tail()  # the hint still reads where it was stuck
    finally:
        for fd in (requests_read, requests_write, answers_read, answers_write):
            os.close(fd)
        os.close(output_read)
        os.close(output_write)


def first_paragraph(check: Check) -> str:
    """A check's docstring's first paragraph, on one line."""
    said = inspect.getdoc(check.run) or ""
    return " ".join(said.split("\n\n")[0].split())


def test_test_code_says_what_each_check_does_in_its_own_words() -> None:
    """The check's own docstring, not its source: non-empty, one per check, the same on both
    stores, and a sentence for the typecheck and the migration."""
    report = run_checks(tree_root("solution"), "memory", only={"1", "4"})
    tests: Any = results_v3(report)["tests"]
    by_number = {t["task_id"]: t["test_code"] for t in tests}
    assert by_number == {n: first_paragraph(CHECKS[n - 1]) for n in (1, 4)}
    grade = Grade("ada", outcomes={c.key: MACHINE for c in CRITERIA})
    graded = document_of(grade)["tests"]
    codes = {c.key: t["test_code"] for c, t in zip(CRITERIA, graded, strict=True)}
    described = [first_paragraph(check) for check in CHECKS]
    assert all(described) and len(set(described)) == len(CHECKS)
    for criterion in CRITERIA:
        code = codes[criterion.key]
        assert code and "\n" not in code and "ctx." not in code and "def " not in code
        if criterion.check is not None:
            assert code == described[criterion.check - 1]
    assert len({codes["typecheck"], codes["migration"], *described}) == len(CHECKS) + 2


def test_each_platform_counts_every_test_with_points_and_none_without() -> None:
    """Classroom 50 and Gradescope take a test's points whatever its status: a check that could
    not run (the tree did not import) is 0 of its 10; the machine's failure has no points."""
    tests = [
        {"name": "a", "status": "pass", "score": 10, "max_score": 10},
        {"name": "b", "status": "fail", "score": 0, "max_score": 10},
        {"name": "c", "status": "error", "score": 0, "max_score": 10},
        {"name": "d", "status": "error", "message": "not graded: the server refused"},
    ]
    document = {"version": 3, "status": "fail", "score": 10, "max_score": 30, "tests": tests}
    classroom, gradescope = classroom50_result(document), gradescope_results(document)
    assert (classroom["score"], classroom["max-score"]) == (10, 30)
    assert gradescope["score"] == 10
    shown: Any = (classroom["tests"], gradescope["tests"])
    for listed in shown:
        assert [t.get("test-name", t.get("name")) for t in listed] == ["a", "b", "c"]


def the_mistake() -> Answer:
    """A mistake of the catalogue that fails a check on memory, edited only inside regions."""
    return next(a for a in CATALOGUE if a.memory_fails and not a.outside)


def total_and_memory(stdout: str) -> tuple[str, ...]:
    """The `total:` line a run printed, then its `memory:`, `typecheck:` and `migration:` lines
    (one of each)."""
    lines = [line.strip() for line in stdout.splitlines()]
    found = []
    for part in ("total", "memory", "typecheck", "migration"):
        (line,) = [line for line in lines if line.startswith(f"{part}: ")]
        found.append(line)
    return tuple(found)


@pytest.mark.parametrize("tree", ["starter", "solution", "mistake"])
def test_the_self_check_and_the_grader_print_the_same_total_for_the_same_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tree: str
) -> None:
    """The same criteria, the same points: `labs check`, SELFTEST and the pinned pytest entry,
    each as it runs by default, print the same total and the same memory, typecheck and
    migration lines, every criterion graded (Postgres on the grader's own cluster)."""
    root = build(the_mistake(), tmp_path / "mistake") if tree == "mistake" else tree_root(tree)
    monkeypatch.setenv("LAB_SEED", "8")  # the grader's inputs too: one seed for all three
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_LANG", "LANG")}
    env |= {"LANGUAGE": "en", "PYTHONIOENCODING": "utf-8", "MOCK": "1"}

    def lab(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "labs", *args],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        return done.stdout

    checked, selftested = lab("check", "--tree", str(root)), lab("selftest", str(root))
    graded = grade_with_pytest(root, tmp_path / "results.json")
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
    assert total_and_memory(checked) == total_and_memory(selftested)
    assert total_and_memory(checked) == total_and_memory(graded.stdout)
    document = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    total = total_and_memory(checked)[0]
    assert total == f"total: {document['score']} / {document['max_score']}"
    for said in (checked, selftested, graded.stdout):  # Postgres too, on the grader's cluster
        assert "  not graded here: " not in said
        assert any(line.strip().startswith("Postgres: ") for line in said.splitlines())
