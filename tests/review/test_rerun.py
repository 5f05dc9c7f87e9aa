"""Watch mode: the checks rerun when a file changes, and Ctrl-C stops cleanly."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import wcwidth

from labs.checking.hints import Hint
from labs.checking.report import Report
from labs.checking.result import CheckResult
from labs.review.progress import with_folders
from labs.review.rerun import summary_lines, watch_tree
from labs.term import i18n
from labs.term.layout import failure_lines
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree


def fake_report(passing: int) -> Report:
    """Six results where the first `passing` pass and the others fail with a hint."""
    return Report(
        "starter",
        "memory",
        [
            CheckResult(str(n), n, f"check {n}'s title", True, 1.0)
            if n <= passing
            else CheckResult(
                str(n),
                n,
                f"check {n}'s title",
                False,
                1.0,
                expected="the same key",
                got="another key",
                hint=Hint("shared/keys.py", n, f"TODO(check {n}): fix it"),
            )
            for n in range(1, 7)
        ],
    )


def test_the_summary_shows_progress_and_the_first_failing_check() -> None:
    """n/6, then the first failing check's number, then its expected, got and hint lines."""
    lines = summary_lines("starter", fake_report(2))
    assert "2/6" in lines[0]
    assert "check 3" in lines[1]
    assert [line.split()[0] for line in lines[2:]] == ["expected:", "got:", "hint:"]
    assert "shared/keys.py:3" in lines[4]


@pytest.mark.parametrize("language", [i18n.ENGLISH, i18n.CHINESE])
def test_the_failure_is_laid_out_as_labs_check_lays_it_out(
    language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns watch's block is labs check's layout, only four columns further left."""
    monkeypatch.setenv("LAB_LANG", language)
    i18n.use(language)
    try:
        report = fake_report(2)
        report.results[2].got = "the key changes on every call: " + "abcdef0123… then " * 6
        lines = summary_lines("starter", report, 80)
        check_block = failure_lines(report.results[2], " " * 8, 84)
    finally:
        i18n.use(i18n.ENGLISH)
    assert lines[-len(check_block) :] == [line[4:] for line in check_block]
    assert len(check_block) > 3 and all(wcwidth.width(line) <= 80 for line in lines)


@pytest.mark.parametrize("language", [i18n.ENGLISH, i18n.CHINESE])
def test_watch_at_80_columns_puts_expected_got_and_hint_on_lines_of_their_own(
    tmp_path: Path, language: str
) -> None:
    """`python -m labs watch` on the starter: one field per line, none wider, no path cut."""
    copy_tree(tree_root("starter"), tmp_path / "starter")
    done = subprocess.run(
        [sys.executable, "-m", "labs", "watch", "--tree", "./starter"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "80", "LAB_LANG": language},
        input="q",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    i18n.use(language)
    try:
        labels = [
            i18n._(t).partition("{text}")[0] for t in ("expected: {text}", "got:      {text}")
        ]
        labels.append(i18n._("hint:     {text}").partition("{text}")[0])
    finally:
        i18n.use(i18n.ENGLISH)
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith("    " + label))
        for label in labels
    ]
    assert starts == sorted(starts)
    keys = (tree_root("starter") / "shared" / "keys.py").read_text(encoding="utf-8")
    line = next(n for n, text in enumerate(keys.splitlines(), 1) if "TODO(check 3)" in text)
    assert f"starter/shared/keys.py:{line}" in lines[starts[2]]
    assert all(wcwidth.width(line) <= 80 for line in lines), done.stdout


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


def watch_with_keys(tree: Path, pressed: str, run: Callable[[Path], Report] | None = None) -> str:
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

    def run(root: Path) -> Report:
        runs.append(root)
        return fake_report(len(runs))  # each run passes one more, so each prints anew

    out = watch_with_keys(tree, "rq", run)
    assert len(runs) == 2
    assert "1/6 checks pass" in out and "2/6 checks pass" in out


def test_h_shows_the_next_hint_for_the_first_failing_check(tmp_path: Path, state: Path) -> None:
    """Pressed twice, h shows tiers 1 and 2 of the first failing check, with its TODO line."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    out = watch_with_keys(tree, "hhq", lambda root: fake_report(3))
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

    from labs.term.keys import single_keys

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
