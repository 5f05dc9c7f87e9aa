"""The notes on a grade: edits outside the regions, a tree that rewrites the kit, Postgres."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from labs.grading.criteria import Grade
from labs.grading.edits import edits_outside_regions
from labs.grading.grader import Grader
from labs.grading.isolate import check_outcomes
from labs.grading.notes import NEEDS_REVIEW, needs_review
from labs.grading.results import results_json
from labs.grading.summary import table_lines, write_csv
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import regions_in
from tests.grading import submissions as make

# What a learner could put in the tree's __init__.py to pass every check without solving any:
# it rewrites the lab kit's runner and checks, but only the copy in its own host's process.
FULL_MARKS_PATCH = """
import labs.checking.checks as _checks
import labs.checking.result as _result

for _check in _checks.CHECKS:
    try:
        _check.run.__code__ = (lambda ctx: None).__code__
    except ValueError:  # a check whose code has free variables keeps it
        pass
_result.CheckResult.passed = property(lambda self: True, lambda self, value: None)
"""


def append_to(path: Path, text: str) -> int:
    """Add lines at the end of a file; return the number of the first line added."""
    before = path.read_text(encoding="utf-8")
    path.write_text(before + text, encoding="utf-8")
    return before.count("\n") + 1


def test_a_copy_edited_only_inside_its_regions_has_no_edits_outside(tmp_path: Path) -> None:
    """Solving every TODO is not an edit outside the regions."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    assert edits_outside_regions(tree) == []


def test_edits_outside_the_regions_are_listed_by_file_and_line(tmp_path: Path) -> None:
    """A changed line, a deleted file and each new file are named, a `migrations/` folder inside
    the tree included (Alembic reads the one beside the tree; the grader never runs these)."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    line = append_to(tree / "gateway" / "routes.py", "\n# a note of my own\n")
    (tree / "worker" / "__main__.py").unlink()
    (tree / "shared" / "extra.py").write_text("X = 1\n", encoding="utf-8")
    (tree / "migrations").mkdir()
    (tree / "migrations" / "0001_mine.py").write_text("revision = '1'\n", encoding="utf-8")
    assert edits_outside_regions(tree) == [
        "worker/__main__.py: deleted",
        "migrations/0001_mine.py:1: a new file",
        "shared/extra.py:1: a new file",
        f"gateway/routes.py:{line}-{line + 1}",
    ]


def test_a_harmless_edit_keeps_its_points_and_is_noted(tmp_path: Path) -> None:
    """Legitimate work is never zeroed: six passes on memory, and a note naming the line."""
    tree = make.fixed(tmp_path / "ada") / "starter"
    line = append_to(tree / "shared" / "keys.py", "# checked by hand\n")
    outcomes = check_outcomes(tree, timeout=20.0)
    assert {o.status for o in outcomes.values()} == {"pass"}
    grade = Grader(tree, timeout=20.0).grade("ada")
    assert grade.outside_regions == [f"shared/keys.py:{line}"]
    assert f"shared/keys.py:{line}" in grade.note
    assert f"shared/keys.py:{line}" in str(results_json(grade)["note"])
    assert results_json(grade)["outside_regions"] == [f"shared/keys.py:{line}"]


def test_a_tree_that_rewrites_the_kit_in_its_host_gets_the_honest_grade(tmp_path: Path) -> None:
    """The checks and CheckResult rewritten at import change nothing: 1, 2 and 6, and a note."""
    tree = make.starter_copy(tmp_path / "mal")
    line = append_to(tree / "__init__.py", FULL_MARKS_PATCH)
    grade = Grader(tree, timeout=20.0).grade("mal")
    memory = {n: grade.outcomes[f"memory-{n}"].status for n in range(1, 7)}
    assert memory == {1: "pass", 2: "pass", 3: "fail", 4: "fail", 5: "fail", 6: "pass"}
    assert f"__init__.py:{line}" in grade.note


def test_a_check_rewritten_from_inside_a_region_changes_no_verdict(tmp_path: Path) -> None:
    """Code in a TODO region that swaps a check's code in its host leaves check 4 failing."""
    tree = make.starter_copy(tmp_path / "mal")
    make.replace_in(
        tree / "shared" / "states.py",
        r"(# TODO\(check 4\).*?\n)",
        r"\1import labs.checking.checks as _c\n"
        r"_c.CHECKS[3].run.__code__ = (lambda ctx: None).__code__\n",
    )
    assert edits_outside_regions(tree) == []  # inside a region: only grading can see it
    outcomes = check_outcomes(tree, timeout=20.0)
    statuses = {n: o.status for n, o in outcomes.items()}
    assert statuses == {1: "pass", 2: "pass", 3: "fail", 4: "fail", 5: "fail", 6: "pass"}


def test_a_submission_without_a_migration_says_why_postgres_failed(
    tmp_path: Path, reachable_database: str
) -> None:
    """The grade command puts the Postgres reason in the note and counts the submission."""
    make.fixed(tmp_path / "cho")
    out = tmp_path / "grades"
    done = subprocess.run(
        [sys.executable, "-m", "labs", "grade", "--out", str(out), str(tmp_path / "cho")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DATABASE_URL": reachable_database},
    )
    assert done.returncode == 0, done.stderr
    reason = "no migration of the tree's own to apply to Postgres"
    row = next(line for line in done.stdout.splitlines() if line.startswith("cho"))
    assert reason in row
    assert "1 with a note to read" in done.stdout
    assert reason in (out / "grades.md").read_text(encoding="utf-8")


def test_an_edit_outside_the_regions_cannot_raise_the_score(tmp_path: Path) -> None:
    """Check 4 solved below its region, not in it: not scored, and the grade needs review."""
    tree = make.starter_copy(tmp_path / "sly")
    solved = next(r for r in regions_in(tree_root("solution")) if r.check == 4)
    append_to(tree / "shared" / "states.py", "\n".join(solved.body_lines) + "\n")
    assert check_outcomes(tree, timeout=20.0)[4].status == "pass"  # the edit works as handed in
    grade = Grader(tree, timeout=20.0).grade("sly")
    assert grade.outcomes["memory-4"].status == "fail"
    assert needs_review(grade)
    assert "memory-4" in grade.note


ANSWERS = """# mypy: ignore-errors
def allowed(status):
    return {
        status.PENDING: frozenset({status.RUNNING, status.CANCELLED, status.FAILED}),
        status.RUNNING: frozenset({status.STREAMING, status.DONE, status.FAILED, status.CANCELLED}),
        status.STREAMING: frozenset({status.DONE, status.FAILED, status.CANCELLED}),
        status.DONE: frozenset(), status.FAILED: frozenset(), status.CANCELLED: frozenset(),
    }
"""


def test_answers_kept_in_a_migrations_folder_inside_the_tree_never_run(tmp_path: Path) -> None:
    """Issue 22: a module in the tree's own `migrations/`, imported from a region, holds check
    4's answer. It works as handed in; the graded tree holds no such file, so check 4 earns
    nothing from it, the file is named as an edit, and the grade needs review."""
    tree = make.starter_copy(tmp_path / "sly")
    (tree / "migrations").mkdir()
    (tree / "migrations" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "migrations" / "answers.py").write_text(ANSWERS, encoding="utf-8")
    make.add_region_code(
        tree, "from ..migrations.answers import allowed as _allowed\nALLOWED = _allowed(RunStatus)"
    )
    assert check_outcomes(tree, timeout=20.0)[4].status == "pass"  # it works as handed in
    grade = Grader(tree, timeout=20.0).grade("sly")
    assert grade.outcomes["memory-4"].status == "fail"
    assert "migrations/answers.py:1: a new file" in grade.outside_regions
    assert needs_review(grade)


def test_an_import_written_above_a_region_costs_nothing(tmp_path: Path) -> None:
    """A solved tree whose region uses a module imported at the top keeps all six passes."""
    tree = make.fixed(tmp_path / "tidy") / "starter"
    make.replace_in(tree / "shared" / "keys.py", r"(import time\n)", r"\1import unicodedata\n")
    make.replace_in(
        tree / "shared" / "keys.py",
        r"(    # TODO\(check 3\)[^\n]*\n)",
        r"\1    assert unicodedata.category('a')  # needs the import above\n",
    )
    grade = Grader(tree, timeout=20.0).grade("tidy")
    memory = {grade.outcomes[f"memory-{n}"].status for n in range(1, 7)}
    assert memory == {"pass"}
    assert not needs_review(grade)
    assert grade.outside_regions  # still listed, for a look


def test_a_grade_that_needs_review_says_so_in_its_own_column(tmp_path: Path) -> None:
    """The table and the CSV carry "needs review" in a review column."""
    grade = Grade("sly", notes=[NEEDS_REVIEW + "as handed in it grades differently"])
    plain = Grade("ada")
    write_csv([grade, plain], tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(encoding="utf-8-sig") as rows:
        review = {row["submission"]: row["review"] for row in csv.DictReader(rows)}
    assert review == {"sly": "needs review", "ada": ""}
    assert "needs review" in next(line for line in table_lines([grade]) if line.startswith("sly"))


def test_a_tree_graded_in_place_is_never_read_through_its_links(tmp_path: Path) -> None:
    """keys.py linked to the solution's (pytest --lab-tree reads no copy): left out and named."""
    tree = make.starter_copy(tmp_path / "eve")
    (tree / "shared" / "keys.py").unlink()
    (tree / "shared" / "keys.py").symlink_to(tree_root("solution") / "shared" / "keys.py")
    grade = Grader(tree, timeout=20.0).grade("eve")
    assert grade.outcomes["memory-3"].status == "fail"
    assert "shared/keys.py -> " in grade.note
