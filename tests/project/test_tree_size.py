"""The trees read like a textbook's listings: at most 1,000 lines of Python each, and no kit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labs.trees.finding import REPO_ROOT
from tests.support.treesize import BUDGET, kit_imports, lines_in, tree_sizes

TREES = ["starter", "solution"]


@pytest.mark.parametrize("tree", TREES)
def test_each_tree_holds_at_most_a_thousand_lines_of_python(tree: str) -> None:
    """Every line of every .py file counts; over budget, the message names the biggest files."""
    sizes = tree_sizes(REPO_ROOT / tree)
    total = sum(sizes.values())
    biggest = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))[:5]
    named = ", ".join(f"{name} ({lines})" for name, lines in biggest)
    assert total <= BUDGET, f"{tree}/ has {total} lines of Python, over {BUDGET}: {named}"


def test_the_count_takes_blank_and_comment_lines_and_leaves_caches_out(tmp_path: Path) -> None:
    """A blank line and a comment count as lines; a .pyc or a cached copy does not."""
    (tmp_path / "a.py").write_text('"""A module."""\n\n# a comment\nx = 1\n', encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("\n\n", encoding="utf-8")
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "c.py").write_text("y = 2\n" * 50, encoding="utf-8")
    assert tree_sizes(tmp_path) == {"a.py": 4, "pkg/b.py": 2}
    assert lines_in(tmp_path / "a.py") == 4


@pytest.mark.parametrize("tree", TREES)
def test_no_tree_imports_the_lab_kit(tree: str) -> None:
    """No module of a tree imports labs or web, at the top or inside a function."""
    assert kit_imports(REPO_ROOT / tree) == []


def test_the_kit_import_check_finds_every_form_of_import(tmp_path: Path) -> None:
    """import, from-import inside a function and import_module with a literal are all caught."""
    (tmp_path / "m.py").write_text(
        "import labs.term\n"
        "def f():\n"
        "    from web.app import create_app\n"
        "    import importlib\n"
        "    return importlib.import_module('labs.checking')\n"
        "from .labs import x\n"  # a module of the tree's own that happens to be called labs
        "NAME = 'labs'\n",
        encoding="utf-8",
    )
    assert kit_imports(tmp_path) == [
        "m.py:1 labs.term",
        "m.py:3 web.app",
        "m.py:5 labs.checking",
    ]


def test_selftest_without_the_kit_installed_says_so_in_one_line(tmp_path: Path) -> None:
    """SELFTEST=1 hands over to the kit as a program; with no kit to find, one line says why."""
    shutil.copytree(REPO_ROOT / "starter", tmp_path / "starter")
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL")}
    done = subprocess.run(
        [sys.executable, "-S", "-m", "starter"],  # -S: no site-packages, so no installed kit
        cwd=tmp_path,
        env={**environ, "SELFTEST": "1", "MOCK": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: SELFTEST=1 needs the lab kit: run `pip install -e .`"
    ]
