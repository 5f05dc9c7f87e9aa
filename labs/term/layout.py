"""A failed check laid out for a terminal: expected, got and hint, each on lines of its own.

`labs check` (its LivePrinter), `labs watch` and `labs list` print a failure the
same way. Each field starts on a line of its own behind its label and wraps to
the terminal's width, its later lines hanging under the text rather than the
label. Widths are terminal columns (a Chinese character takes two), and a path
or a file:line is never cut (see columns.py). When the output is not a terminal
(a pipe, a file) and COLUMNS is not set, lines stay whole: programs read them.
"""

from __future__ import annotations

import os
from typing import Protocol, TextIO

import wcwidth

from .columns import wrap
from .i18n import N_, _

# The labels of a failure, which labs.checking.result's CheckResult.message words too.
EXPECTED, GOT, HINT = N_("expected: {text}"), N_("got:      {text}"), N_("hint:     {text}")
# A check's verdict, passed or not: its mark, and its word (a msgid each front end words).
VERDICTS = {True: ("✓", N_("PASS")), False: ("✗", N_("FAIL"))}


class Failure(Protocol):
    """What a check's outcome tells a learner (labs.checking.result.CheckResult has it)."""

    @property
    def passed(self) -> bool:
        """Whether the check passed."""

    @property
    def expected(self) -> str:
        """What the check wanted."""

    @property
    def got(self) -> str:
        """What happened instead."""

    @property
    def hint(self) -> object | None:
        """The file:line to edit and its instruction, or None."""


def terminal_width(stream: TextIO) -> int | None:
    """The columns to wrap at: COLUMNS if set, else the terminal's; None for a pipe or a file."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):  # a StringIO, a closed stream
        pass
    return None


def wrapped(text: str, indent: str, width: int | None, hang: str | None = None) -> list[str]:
    """One line of text at indent, wrapped to width with later lines at hang (default: indent)."""
    later = indent if hang is None else hang
    if width is None:
        return [indent + text]
    return wrap(text, width, indent, later, break_long_words=False) or [indent.rstrip()]


def labelled(template: str, text: str, indent: str, width: int | None) -> list[str]:
    """One field ("got:      {text}", translated) as lines, the later ones under its text.

    A text of several lines (a crashed tree's last output) keeps its lines, each
    wrapped in turn under the first.
    """
    shown = _(template)
    label = shown.partition("{text}")[0]
    hang = indent + " " * wcwidth.width(label)
    first, *rest = text.split("\n")
    lines = wrapped(shown.format(text=first), indent, width, hang)
    for line in rest:
        lines.extend(wrapped(line, hang, width))
    return lines


def failure_lines(result: Failure, indent: str, width: int | None) -> list[str]:
    """A failed check's expected, got and hint, laid out; nothing for a check that passed."""
    if result.passed:
        return []
    lines = labelled(EXPECTED, result.expected, indent, width)
    lines += labelled(GOT, result.got, indent, width)
    if result.hint:
        lines += labelled(HINT, str(result.hint), indent, width)
    return lines


def marks(stream: TextIO) -> tuple[str, str]:
    """The words for a pass and a fail, with ✓ and ✗ where the stream can show them.

    Both are padded to the same terminal columns, so the titles after them line up
    in every language (通过 is two characters, 未通过 three).
    """
    encoding = (getattr(stream, "encoding", None) or "ascii").lower()
    passed, failed = (
        f"{mark} {_(word)}" if "utf" in encoding else _(word)
        for mark, word in (VERDICTS[True], VERDICTS[False])
    )
    widest = max(wcwidth.width(passed), wcwidth.width(failed))
    return wcwidth.ljust(passed, widest), wcwidth.ljust(failed, widest)
