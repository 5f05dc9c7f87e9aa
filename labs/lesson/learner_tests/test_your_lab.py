"""`pytest` in your repository: the lab is set up, and its self-checks run on your tree.

These tests pass before you have solved anything: they check the install, not
the work. How far you are is what `MOCK=1 SELFTEST=1 python -m starter` says
(`6 passed, 0 failed` when you are done). `labs release` writes this file as
the learners' tests/test_your_lab.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOTALS = re.compile(r"(\d) passed, (\d) failed")
HINT = re.compile(r"hint: +(starter/\S+\.py):(\d+) +TODO\(check (\d)\)")


def selftest() -> subprocess.CompletedProcess[str]:
    """The README's self-checks on the in-memory store, in English."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"MOCK": "1", "SELFTEST": "1", "LANGUAGE": "en", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        [sys.executable, "-m", "starter"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_six_self_checks_run_on_your_tree() -> None:
    """They run to the end, count six checks, and exit 0 exactly when all six pass."""
    done = selftest()
    lines = done.stdout.strip().splitlines()
    totals = TOTALS.fullmatch(lines[-1]) if lines else None
    assert totals, done.stdout[-2000:] + done.stderr[-2000:]
    assert int(totals[1]) + int(totals[2]) == 6
    assert done.returncode == (0 if totals[2] == "0" else 1)


def test_each_failing_check_points_at_a_todo_line_in_your_tree() -> None:
    """Every check that fails names a file and line of starter/ holding its TODO."""
    done = selftest()
    failing = re.findall(r"^ +(\d) \S+ FAIL ", done.stdout, flags=re.M)
    hints = HINT.findall(done.stdout)
    assert sorted({number for *_, number in hints}) == sorted(set(failing))
    for path, line, number in hints:
        text = (ROOT / path).read_text(encoding="utf-8").splitlines()
        assert f"TODO(check {number})" in text[int(line) - 1]
