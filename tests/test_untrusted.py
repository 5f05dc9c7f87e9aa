"""Untrusted text: one cleaner and one capped buffer, for the kit and the dashboard alike."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labs.untrusted import CappedOutput, clean_text

# What may never reach a terminal, a CSV cell or a page from a learner's process.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SURROGATE = re.compile("[\ud800-\udfff]")


@pytest.mark.parametrize(
    ("hostile", "shown"),
    [
        ("boom\x1b[2K\r\x1b[1Aada", "boomada"),  # CSI: erase the line, cursor up
        ("a\x1b]0;pwned\x07b", "ab"),  # OSC ended by BEL: the terminal's title
        ("a\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # OSC 8 ended by ST
        ("a\x9b31mred", "ared"),  # the one-byte CSI
        ("a\x9d0;title\x9cb", "ab"),  # the one-byte OSC and ST
        ("a\x1bcb", "ab"),  # ESC c: reset the terminal
        ("ok\x07\x08\x00\x7f\x85!", "ok !"),  # BEL, backspace, NUL, DEL; NEL is a line break
        ("\u202etxt.exe\u202c", "txt.exe"),  # a right-to-left override and its pop
        ("a\u2066b\u2069\u200e\u200f\u061cc", "abc"),  # isolates and marks
        ("line\nnext\tcell", "line next cell"),
    ],
)
def test_escapes_controls_and_bidi_marks_leave_only_the_visible_text(
    hostile: str, shown: str
) -> None:
    """Each kind of hostile sequence is taken out whole, and the visible text stays."""
    assert clean_text(hostile) == shown


def test_newlines_stay_when_asked_for_and_every_line_break_becomes_one() -> None:
    """Multi-line output keeps its lines; CRLF, NEL and U+2028 each become one newline."""
    assert clean_text("one\r\ntwo\x85three\u2028four\n", keep_newlines=True) == (
        "one\ntwo\nthree\nfour\n"
    )


def test_a_lone_surrogate_becomes_a_replacement_character_that_encodes() -> None:
    """Half a UTF-16 pair (JSON can carry one) cannot be written out: it becomes U+FFFD."""
    cleaned = clean_text("bad \ud800 half \udfff end")
    assert cleaned == "bad \ufffd half \ufffd end"
    cleaned.encode("utf-8")


@pytest.mark.parametrize(("limit", "shown"), [(5, "abcd…"), (10, "abcdefghij"), (1, "…")])
def test_a_length_cap_cuts_with_an_ellipsis(limit: int, shown: str) -> None:
    """With a limit, text longer than it is cut to exactly limit characters, the last one '…'."""
    assert clean_text("abcdefghij", limit) == shown


def test_the_cap_counts_what_is_shown_not_the_escapes_taken_out() -> None:
    """Escapes go first, so a flood of them does not eat the visible text's room."""
    assert clean_text("\x1b[31m" * 100 + "visible", 10) == "visible"


@given(st.text(), st.integers(min_value=1, max_value=200), st.booleans())
def test_whatever_comes_in_nothing_unsafe_comes_out(text: str, limit: int, lines: bool) -> None:
    """For any text: no control or bidi character, no surrogate, within the cap, encodable."""
    cleaned = clean_text(text, limit, keep_newlines=lines)
    assert not UNSAFE.search(cleaned) and not SURROGATE.search(cleaned)
    assert len(cleaned) <= limit
    assert lines or "\n" not in cleaned
    cleaned.encode("utf-8")


def test_clean_text_takes_any_value() -> None:
    """An exception or a number is cleaned as its text."""
    assert clean_text(ValueError("bad\x1b[2Jvalue"), 80) == "badvalue"


def test_the_capped_buffer_keeps_its_newest_bytes_for_a_crash_report() -> None:
    """last(n) is the end of the output: the whole of it while nothing was left out."""
    buffer = CappedOutput(8)
    buffer.feed(b"abc")
    assert buffer.last(2) == "bc" and buffer.last(10) == "abc"
    buffer.feed(b"defghijkl")
    assert buffer.text() == "abcd\n… 4 bytes of output left out …\nijkl"
    assert buffer.last(3) == "jkl" and buffer.last(0) == ""


def test_a_capped_buffer_needs_room_for_a_head_and_a_tail() -> None:
    """A limit under two bytes is refused, naming the limit."""
    with pytest.raises(ValueError, match="at least 2 bytes, not 1"):
        CappedOutput(1)
