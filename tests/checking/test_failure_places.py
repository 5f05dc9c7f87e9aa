"""A failed check points at the place to look: where a hung tree was stuck, or an import broke."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from labs.checking.hints import stuck_at
from labs.trees.finding import REPO_ROOT, find_tree

SHIPPED_LINE = '    material = f"{session_id}\\x1f{time.time_ns()}"\n'


def learner_copy(tmp_path: Path, replacement: str) -> tuple[Path, int]:
    """A starter copy whose key line is replaced; return it and the first replaced line."""
    tree = tmp_path / "learner"
    subprocess.run(["cp", "-r", str(REPO_ROOT / "starter"), str(tree)], check=True)
    keys = tree / "shared" / "keys.py"
    shipped = keys.read_text()
    assert SHIPPED_LINE in shipped, "the starter's key line moved: update this test"
    keys.write_text(shipped.replace(SHIPPED_LINE, replacement))
    line = shipped[: shipped.index(SHIPPED_LINE)].count("\n") + 1
    return tree, line


def lab_check(tree: Path, *args: str) -> str:
    """python -m labs check on a tree, run from the tree's parent folder; its output."""
    environ = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_SEED")}
    done = subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", tree.name, "--lang", "en", *args],
        cwd=tree.parent,
        # Wide enough that no hint wraps: these tests read what a row says, not its layout.
        env={**environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done.stdout


def test_a_timed_out_check_points_at_the_line_the_tree_was_stuck_on(tmp_path: Path) -> None:
    """An endless loop in keys.py: checks 1, 3 and 6 time out, each hinting at the loop's line."""
    tree, line = learner_copy(tmp_path, "    while True:\n        pass\n    material = ''\n")
    output = lab_check(tree, "--check-timeout", "2", "--only", "1", "--only", "6")
    hints = [row.split("hint:", 1)[1].strip() for row in output.splitlines() if "hint:" in row]
    assert len(hints) == 2, output
    for hint in hints:
        # The loop's two lines: the host was stopped on one of them.
        assert re.match(rf"learner/shared/keys.py:({line}|{line + 1}) ", hint), output
        assert "idempotency_key_for" in hint
    assert "routes.py:1" not in output and "queries.py:1" not in output


def test_a_syntax_error_names_the_file_with_the_trees_path(tmp_path: Path) -> None:
    """A tree that does not import says so with the file and line, the tree's folder first."""
    tree, line = learner_copy(tmp_path, "    material = (\n")
    output = lab_check(tree)
    assert f"(at learner/shared/keys.py:{line})" in output, output


@pytest.mark.parametrize("root_seen_by_host", ["/sandbox/learner", ""])
def test_the_deepest_frame_inside_the_tree_is_the_place(root_seen_by_host: str) -> None:
    """Frames outside the tree are passed over; a sandbox's copy of the tree counts as the tree."""
    tree = find_tree("starter")
    root = root_seen_by_host or str(tree.root)
    stacks = (
        "Thread 0x01 (most recent call first):\n"
        '  File "/usr/lib/python3/threading.py", line 320 in wait\n'
        f'  File "{root}/shared/keys.py", line 26 in idempotency_key_for\n'
        f'  File "{root}/gateway/routes.py", line 40 in chat\n'
        '  File "/kit/labs/checking/ops.py", line 180 in op_http\n'
    )
    hint = stuck_at(tree, stacks, root_seen_by_host)
    assert hint is not None and hint.line == 26
    assert hint.path.endswith("starter/shared/keys.py") and "idempotency_key_for" in hint.text
    assert stuck_at(tree, stacks.replace(root, "/elsewhere"), root_seen_by_host) is None
