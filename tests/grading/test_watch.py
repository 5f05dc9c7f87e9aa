"""Watch mode: the checks rerun when a file changes, and Ctrl-C stops cleanly."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from labs.grading.criteria import Outcome
from labs.regions import copy_tree
from labs.trees import REPO_ROOT, tree_root
from labs.watch import summary_lines, watch_tree


def fake_outcomes(passing: int) -> dict[int, Outcome]:
    """Six outcomes where the first `passing` pass and the next fails with a hint."""
    return {
        n: Outcome("pass") if n <= passing else Outcome("fail", f"hint: keys.py:{n}")
        for n in range(1, 7)
    }


def test_the_summary_shows_progress_and_the_first_failing_check() -> None:
    """n/6, then the first failing check's number and message."""
    lines = summary_lines("starter", fake_outcomes(2))
    assert "2/6" in lines[0]
    assert "check 3" in lines[1] and "keys.py:3" in lines[2]


@pytest.mark.parametrize("poll", [True, False], ids=["polling", "file-events"])
def test_saving_a_file_reruns_the_checks(tmp_path: Path, poll: bool) -> None:
    """After a save, the checks run again, whichever way changes are noticed."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    runs: list[Path] = []
    stop = threading.Event()

    def run(root: Path) -> dict[int, Outcome]:
        runs.append(root)
        if len(runs) == 2:
            stop.set()
        return fake_outcomes(3)

    out = io.StringIO()
    watcher = threading.Thread(
        target=watch_tree,
        args=(tree, "starter", out, stop),
        kwargs={"poll": poll, "run": run},
        daemon=True,
    )
    watcher.start()
    deadline = time.monotonic() + 20
    while not runs and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.6)  # let the watcher take its first look
    keys = tree / "shared" / "keys.py"
    keys.write_text(keys.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    watcher.join(timeout=20)
    stop.set()
    assert len(runs) == 2
    assert "changed: shared/keys.py" in out.getvalue()


def test_ctrl_c_stops_watching_cleanly(tmp_path: Path) -> None:
    """SIGINT ends python -m labs watch with exit 0 and no traceback."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    watch = subprocess.Popen(
        [sys.executable, "-m", "labs", "watch", "--tree", str(tree)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stdout is not None
    for line in watch.stdout:
        if line.startswith("watching"):
            break
    os.kill(watch.pid, signal.SIGINT)
    out, err = watch.communicate(timeout=20)
    assert watch.returncode == 0
    assert "stopped watching" in out
    assert "Traceback" not in err


def test_help_says_it_falls_back_to_polling() -> None:
    """--help tells the user about file events and the polling fallback."""
    result = subprocess.run(
        [sys.executable, "-m", "labs", "watch", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "polling" in result.stdout and "file events" in result.stdout
