"""Watch mode: the checks rerun when a file changes, and Ctrl-C stops cleanly."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from labs.grading.criteria import Outcome
from labs.term.watch import summary_lines, watch_tree, with_folders
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree


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


def watch_with_keys(
    tree: Path, pressed: str, run: Callable[[Path], dict[int, Outcome]] | None = None
) -> str:
    """Watch the tree, press the keys in order, and return what was printed once it stops."""
    out = io.StringIO()
    stop = threading.Event()
    watcher = threading.Thread(
        target=watch_tree,
        args=(tree, "starter", out, stop),
        kwargs={"poll": True, "run": run, "keys": io.StringIO(pressed)},
        daemon=True,
    )
    watcher.start()
    watcher.join(timeout=60)
    stop.set()
    assert not watcher.is_alive(), "q did not stop the watcher"
    return out.getvalue()


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Hints shown are remembered in a state folder of this test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    return folder


def test_r_reruns_the_checks_and_q_quits(tmp_path: Path) -> None:
    """r runs the checks once more; q ends watching without a file change."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    runs: list[Path] = []

    def run(root: Path) -> dict[int, Outcome]:
        runs.append(root)
        return fake_outcomes(len(runs))  # each run passes one more, so each prints anew

    out = watch_with_keys(tree, "rq", run)
    assert len(runs) == 2
    assert "1/6 checks pass" in out and "2/6 checks pass" in out


def test_h_shows_the_next_hint_for_the_first_failing_check(tmp_path: Path, state: Path) -> None:
    """Pressed twice, h shows tiers 1 and 2 of the first failing check, with its TODO line."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    out = watch_with_keys(tree, "hhq", lambda root: fake_outcomes(3))
    assert "check 4, hint 1 of 3" in out and "check 4, hint 2 of 3" in out
    assert "shared/states.py:" in out and "press h again" in out


def test_a_syntax_error_is_named_with_its_folder_and_printed_once(tmp_path: Path) -> None:
    """The file that does not parse is named as shared/keys.py; a rerun does not repeat it."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    keys = tree / "shared" / "keys.py"
    keys.write_text(keys.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    out = watch_with_keys(tree, "rq")
    assert out.count("could not run") == 1
    assert "shared/keys.py does not parse" in out
    assert "unchanged, the same result as above" in out


def test_a_file_named_without_its_folder_gets_it() -> None:
    """(keys.py, line 3) becomes (shared/keys.py, line 3); a name several files share stays."""
    root = tree_root("starter")
    assert with_folders("bad (keys.py, line 3)", root) == "bad (shared/keys.py, line 3)"
    assert with_folders("bad (__init__.py, line 1)", root) == "bad (__init__.py, line 1)"


def test_the_watch_command_quits_on_q_from_a_pipe(tmp_path: Path) -> None:
    """python -m labs watch reads keys from a piped stdin and exits 0 on q."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    watch = subprocess.Popen(
        [sys.executable, "-m", "labs", "watch", "--tree", str(tree)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watch.stdout is not None and watch.stdin is not None
    for line in watch.stdout:
        if line.startswith("keys:"):
            break
    watch.stdin.write("q")
    watch.stdin.flush()
    out, err = watch.communicate(timeout=30)
    assert watch.returncode == 0, err
    assert "stopped watching" in out


def test_a_typecheck_says_it_is_working_before_it_ends() -> None:
    """python -m labs typecheck names what it checks on stderr first, then mypy's verdict."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "typecheck", "starter"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stderr.startswith("type-checking starter with mypy --strict")
    assert "Success" in done.stdout or "error" in done.stdout


def test_keys_arrive_without_enter_only_on_a_terminal_and_the_terminal_is_restored() -> None:
    """On a terminal, cbreak mode while watching and the old mode after; a pipe is left alone."""
    import termios

    from labs.term.watch import single_keys

    main, secondary = os.openpty()
    try:
        with os.fdopen(secondary, "r", closefd=False) as terminal:
            before = termios.tcgetattr(secondary)
            assert before[3] & termios.ICANON
            with single_keys(terminal):
                assert not termios.tcgetattr(secondary)[3] & termios.ICANON
            assert termios.tcgetattr(secondary) == before
    finally:
        os.close(main)
        os.close(secondary)
    with single_keys(io.StringIO("q")):  # not a terminal: nothing to set, nothing to fail
        pass
