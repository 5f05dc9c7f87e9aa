"""Wrapping text for a terminal, measured in columns: a Chinese character takes two.

textwrap counts characters and breaks lines only at spaces. A Chinese
sentence has no spaces, so it would move whole to the next line, and its
characters would be counted as half their width. wcwidth's wrapper measures
columns; the one here also lets a line end between two Chinese characters,
as Chinese typesetting does. English has no such place, so English text wraps
exactly as textwrap wraps it.
"""

from __future__ import annotations

import re

from wcwidth.textwrap import SequenceTextWrapper

# Where Chinese text may break: after any wide character except an opening bracket, and never
# before a closing bracket or quote, a comma or a full stop (those stay with the character
# they follow, as Chinese typesetting keeps them).
CHINESE_BREAK = re.compile(
    r"(?<=[\u2e80-\u9fff\uff00-\uffef])(?<![（「《“])(?![，。、；：？！）”’」》])"
)


class ColumnWrapper(SequenceTextWrapper):
    """textwrap's wrapping measured in terminal columns, breaking inside Chinese text too."""

    def _split(self, text: str) -> list[str]:
        """The pieces a line may end after: words, spaces and single Chinese characters."""
        words = super()._split(text)
        return [piece for word in words for piece in CHINESE_BREAK.split(word) if piece]


def wrap(
    text: str, width: int, indent: str = "", subsequent_indent: str | None = None
) -> list[str]:
    """The text as lines of at most width columns, the first starting with indent."""
    later = indent if subsequent_indent is None else subsequent_indent
    wrapper = ColumnWrapper(
        width, initial_indent=indent, subsequent_indent=later, break_on_hyphens=False
    )
    return wrapper.wrap(text)
