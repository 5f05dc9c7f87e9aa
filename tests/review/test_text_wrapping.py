"""The TOML texts rewrapped for a terminal: by display columns, and no stray spaces in Chinese."""

from __future__ import annotations

import re

import pytest
import wcwidth

from labs.review import texts
from labs.term.i18n import CHINESE

# The review's text files; their Chinese is the catalog's (labs/locale), looked up in context.
TEXT_FILES = sorted(path.stem for path in texts.HERE.glob("*.toml"))
# Two Chinese characters (or full-width punctuation) with a space between them.
SPACE_IN_CHINESE = re.compile(r"[\u2e80-\uffef] [\u2e80-\uffef]")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("name", TEXT_FILES)
def test_chinese_paragraphs_fit_the_terminal_and_join_without_spaces(name: str) -> None:
    """A line break inside a Chinese sentence joins without a space; no line passes 78 columns."""
    chinese = [text for text in texts.texts(texts.load(name, CHINESE)) if CJK.search(text)]
    assert chinese, f"{name}.toml has no text in Chinese: the catalog was not read"
    for text in chinese:
        shown = texts.paragraph(text, indent="  ")
        # Spaces the text itself puts between Chinese words stay; joining lines adds none.
        spaced = re.sub(r"[ \t]+", " ", text)  # runs of spaces become one, as in the output
        added = len(SPACE_IN_CHINESE.findall(shown)) - len(SPACE_IN_CHINESE.findall(spaced))
        assert added <= 0, shown
        assert "".join(shown.split()) == "".join(text.split())  # nothing lost or invented
        too_wide = [line for line in shown.splitlines() if wcwidth.width(line) > 78]
        assert not too_wide, too_wide


def test_the_detector_sees_the_space_a_plain_join_would_leave() -> None:
    """Joining with spaces, as for English, is what the test above must catch."""
    text = "三个地方：shared/keys.py 里的键本身；\n以及 runs 表。"
    assert SPACE_IN_CHINESE.search(" ".join(text.split()))
    assert not SPACE_IN_CHINESE.search(texts.paragraph(text))


def test_english_paragraphs_still_join_words_with_a_space() -> None:
    """Across a line break, two English words stay two words."""
    assert texts.paragraph("the key\nitself") == "the key itself"
