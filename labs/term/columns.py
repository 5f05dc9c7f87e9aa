"""Wrapping text for a terminal, measured in columns: a Chinese character takes two.

textwrap counts characters and breaks lines only at spaces. A Chinese
sentence has no spaces, so it would move whole to the next line, and its
characters would be counted as half their width. wcwidth's wrapper measures
columns; the one here also lets a line end between two Chinese characters,
as Chinese typesetting does. English has no such place, so English text wraps
exactly as textwrap wraps it. A word holding a path or a file:line is never
broken inside, so it can still be copied and clicked whole.
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
# A word that names a file: a path (shared/keys.py, C:\lab) or a file:line (keys.py:24).
PATH_LIKE = re.compile(r"[/\\]|\w\.\w+:\d")
WORDS = re.compile(r"(\s+)")


class ColumnWrapper(SequenceTextWrapper):
    """textwrap's wrapping measured in terminal columns, breaking inside Chinese text too."""

    def _split(self, text: str) -> list[str]:
        """The pieces a line may end after: words, spaces and single Chinese characters.

        A word naming a file stays one piece: no break at its hyphens or its Chinese.
        """
        pieces: list[str] = []
        for word in WORDS.split(text):
            if word.isspace() or PATH_LIKE.search(word):
                pieces.append(word)
            elif word:
                chunks = super()._split(word)
                pieces.extend(piece for chunk in chunks for piece in CHINESE_BREAK.split(chunk))
        return [piece for piece in pieces if piece]


def wrap(
    text: str,
    width: int,
    indent: str = "",
    subsequent_indent: str | None = None,
    *,
    break_long_words: bool = True,
) -> list[str]:
    """The text as lines of at most width columns, the first starting with indent.

    With break_long_words=False a word wider than the line (a long path) stands whole on a
    line of its own, wider than width, rather than cut in two.
    """
    later = indent if subsequent_indent is None else subsequent_indent
    wrapper = ColumnWrapper(
        width,
        initial_indent=indent,
        subsequent_indent=later,
        break_on_hyphens=False,
        break_long_words=break_long_words,
    )
    return wrapper.wrap(text)
