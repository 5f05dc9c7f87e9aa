"""labs list: every check as pass or fail from a fresh run, and the next TODO to edit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labs.trees.finding import tree_root
from labs.trees.regions import copy_tree
from tests.support.english import english_runs
from tests.support.solved import apply_solution

ROW = re.compile(r"^  ([1-6]) [✓✗] (\S+)", re.MULTILINE)
NEXT = re.compile(r"^next: edit (\S+):(\d+)  (TODO\(check (\d)\): .*)$", re.MULTILINE)


def labs_list(tree: Path, *args: str, language: str = "en") -> str:
    """What `python -m labs list --tree mine` prints from the tree's folder; it exits 0."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "list", "--tree", f"./{tree.name}", *args],
        cwd=tree.parent,
        env={**os.environ, "LAB_LANG": language},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def todo_line(tree: Path, relative: str, check: int) -> int:
    """The line of the first TODO(check N) marker in one of the tree's files."""
    lines = (tree / relative).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if f"TODO(check {check})" in line)


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    """A learner's copy of the starter, as shipped."""
    return copy_tree(tree_root("starter"), tmp_path / "mine")


@pytest.mark.parametrize("solved", [set(), {3}, {3, 4}])
def test_each_check_is_listed_and_the_next_todo_is_the_first_failing_checks(
    mine: Path, solved: set[int]
) -> None:
    """Rows say which checks pass; next names a real TODO line of the first failing check."""
    apply_solution(mine, tree_root("solution"), solved)
    out = labs_list(mine)
    rows = {int(number): word for number, word in ROW.findall(out)}
    failing = sorted({3, 4, 5} - solved)
    assert sorted(rows) == [1, 2, 3, 4, 5, 6]
    assert [n for n, word in rows.items() if word == "FAIL"] == failing
    found = NEXT.search(out)
    assert found is not None, out
    path, line, instruction, number = found.groups()
    assert int(number) == failing[0]
    assert path.startswith("mine/")
    text = (mine.parent / path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
    assert instruction in text


def test_all_six_passing_says_done(mine: Path) -> None:
    """With every region solved there is no next TODO, and the list says the lab is done."""
    apply_solution(mine, tree_root("solution"))
    out = labs_list(mine)
    assert out.count("✓") == 6 and "all six pass: done" in out
    assert not NEXT.search(out)


def test_a_file_that_does_not_parse_is_named_instead_of_a_todo(mine: Path) -> None:
    """No check can run: every row fails and the file is named with its folder and line."""
    keys = mine / "shared" / "keys.py"
    keys.write_text(keys.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    out = labs_list(mine)
    assert out.count("✗") == 6 and "shared/keys.py does not parse" in out
    assert not NEXT.search(out)


def test_the_list_speaks_chinese(mine: Path) -> None:
    """In Chinese the score, rows and the next step carry no English sentence."""
    out = labs_list(mine, language="zh_CN")
    assert (
        "通过 3/6 项检查" in out
        and f"下一步：修改 mine/shared/keys.py:{todo_line(mine, 'shared/keys.py', 3)}" in out
    )
    # The TODO's own words are the tree's (English), wrapped onto indented lines on a narrow screen.
    english_outside_the_instruction = re.sub(r"TODO\(check \d\): .*(\n {4,}\S.*)*", "", out)
    assert not english_runs(english_outside_the_instruction), out
