"""A failed check's expected, got and hint: one field per line, wrapped, paths never cut."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
import wcwidth

from labs.checking.hints import Hint
from labs.checking.report import LivePrinter
from labs.checking.result import CheckResult
from labs.term import i18n
from labs.term.layout import failure_lines, terminal_width
from labs.trees.finding import REPO_ROOT

LONG_PATH = "/home/学习者/课程/mini-koda-lab-with-a-long-name/starter/shared/keys.py"
PATHS = re.compile(r"\S*/\S*|\S+\.py:\d+")


@pytest.fixture(params=[i18n.ENGLISH, i18n.CHINESE])
def language(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test in English and in Chinese; English again afterwards."""
    monkeypatch.setenv("LAB_LANG", request.param)
    i18n.use(request.param)
    yield request.param
    i18n.use(i18n.ENGLISH)


def failed(got: str = "", hint_path: str = LONG_PATH) -> CheckResult:
    """A failed check 3 with a long expected text, the given got, and a hint at hint_path:24."""
    return CheckResult(
        "3",
        3,
        "idempotency",
        False,
        4.0,
        expected="idempotency_key_for to return the same key for the same request, every time, "
        "in every process, whatever the clock says",
        got=got
        or "b3a5f1e23e58… then 99590fb3cbf5…: the key changes on every call, see shared/keys.py",
        hint=Hint(
            hint_path,
            24,
            "TODO(check 3): hash session + clientMessageId, or else "
            "session + time bucket + message.",
        ),
    )


LABELS = ("expected: {text}", "got:      {text}", "hint:     {text}")


def label(template: str) -> str:
    """A field's label in the language in use ("got:      ", "实际：")."""
    return i18n._(template).partition("{text}")[0]


@pytest.mark.parametrize("width", [60, 80])
def test_each_field_has_its_own_lines_that_fit_and_hang_under_the_text(
    language: str, width: int
) -> None:
    """expected, got, hint each start a line; their later lines start where the text starts."""
    indent = " " * 8
    lines = failure_lines(failed(hint_path="starter/shared/keys.py"), indent, width)
    starts = [
        next(i for i, line in enumerate(lines) if line.startswith(indent + label(t)))
        for t in LABELS
    ]
    assert starts[0] == 0 and starts == sorted(starts)
    for template, start, end in zip(LABELS, starts, [*starts[1:], len(lines)], strict=True):
        assert end - start >= 2, lines  # each field is long enough to wrap at these widths
        hang = indent + " " * wcwidth.width(label(template))
        for later in lines[start + 1 : end]:
            assert later.startswith(hang) and not later[len(hang)].isspace(), later
    assert all(wcwidth.width(line) <= width for line in lines), lines


def test_a_path_or_a_file_line_is_never_cut(language: str) -> None:
    """A long path with Chinese folders, and every file:line, are whole on one line."""
    result = failed(hint_path=LONG_PATH)
    lines = failure_lines(result, "    ", 50)
    assert any(f"{LONG_PATH}:24" in line for line in lines)
    for path in PATHS.findall(result.got + " " + str(result.hint)):
        assert any(path in line for line in lines), (path, lines)


def test_a_several_line_got_keeps_its_lines_under_the_label(language: str) -> None:
    """A crashed tree's last output lines each stay a line, under the text, not the label."""
    lines = failure_lines(failed(got="the tree's process died:\nline one\nline two"), "  ", 80)
    assert [line.strip() for line in lines if line.strip() in ("line one", "line two")] == [
        "line one",
        "line two",
    ]


def test_a_passed_check_has_no_failure_lines() -> None:
    """Nothing to lay out for a check that passed."""
    passed = CheckResult("1", 1, "intake", True, 1.0)
    assert failure_lines(passed, "    ", 80) == []


def test_a_pipe_gets_whole_lines_unless_columns_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs reading a pipe get one line per field; COLUMNS asks for wrapping anyway."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width(io.StringIO()) is None
    assert len(failure_lines(failed(), "", terminal_width(io.StringIO()))) == 3
    monkeypatch.setenv("COLUMNS", "72")
    assert terminal_width(io.StringIO()) == 72


def test_labs_check_prints_the_failure_with_the_shared_layout(
    language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LivePrinter's failure block is failure_lines at its indent of eight."""
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    LivePrinter(out).result(failed())
    printed = out.getvalue().splitlines()[1:]
    assert printed == failure_lines(failed(), " " * 8, 80)


def test_labs_check_at_80_columns_wraps_every_failure(language: str) -> None:
    """`python -m labs check` on the starter at 80 columns: no failure line is wider, none cut."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", "starter"],
        cwd=REPO_ROOT,
        env={**os.environ, "COLUMNS": "80", "LAB_LANG": language},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    detail = [line for line in done.stdout.splitlines() if line.startswith(" " * 8)]
    assert len(detail) > 9, done.stdout  # three fields for each of three failures, some wrapped
    assert all(wcwidth.width(line) <= 80 for line in detail), detail
    for path in (
        "starter/shared/keys.py:",
        "starter/shared/states.py:",
        "starter/infra/memory.py:",
    ):
        assert any(path in line for line in detail), path
