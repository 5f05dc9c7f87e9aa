"""The TOML texts rewrapped for a terminal: by display columns, and no stray spaces in Chinese."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator

import pytest
import wcwidth

from labs.review import texts
from labs.trees.finding import REPO_ROOT

FOLDER = REPO_ROOT / "labs" / "review"
CHINESE_FILES = sorted(FOLDER.glob("*.zh_CN.toml"))
# Two Chinese characters (or full-width punctuation) with a space between them.
SPACE_IN_CHINESE = re.compile(r"[\u2e80-\uffef] [\u2e80-\uffef]")


def prose(value: object) -> Iterator[str]:
    """Every string in a parsed TOML document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from prose(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from prose(inner)


@pytest.mark.parametrize("path", CHINESE_FILES, ids=lambda p: p.name)
def test_chinese_paragraphs_fit_the_terminal_and_join_without_spaces(path: object) -> None:
    """A line break inside a Chinese sentence joins without a space; no line passes 78 columns."""
    assert isinstance(path, type(FOLDER))
    for text in prose(tomllib.loads(path.read_text(encoding="utf-8"))):
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
