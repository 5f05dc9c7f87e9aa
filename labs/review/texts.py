"""The learner-facing texts of this package, kept in the TOML files beside it.

Each `<name>.toml` holds a command's texts in English, in the shape the code
reads them (labels, questions, checklist items). Every text in it is a gettext
message (labs/locale, like every other sentence of the lab), looked up in the
context `review:<name>`, so the same words elsewhere may be translated
otherwise: `pybabel extract` reads them with extract() below, and load()
translates them into the language in use. A text with no translation yet is
shown in English.

Not every string is a text: ids, and the lists that name code or verifications
(a hint's `places`, a checklist item's `verify`), stay as written. Of the lists,
only a question's `key_points` are words for the reader.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from labs.term.columns import wrap
from labs.term.i18n import pgettext, translation

HERE = Path(__file__).resolve().parent
# The lists whose strings are words for the reader; every other list names code or data.
TEXT_LISTS = frozenset({"key_points"})


def context(name: str) -> str:
    """The gettext context of <name>.toml's texts."""
    return f"review:{name}"


@functools.cache
def read(path: Path) -> dict[str, Any]:
    """One TOML file, parsed (once: the files ship with the kit and do not change)."""
    with path.open("rb") as file:
        return tomllib.load(file)


def translated(value: Any, translate: Callable[[str], str], key: str | None = None) -> Any:
    """value with each of its texts passed through translate; ids and names as they are."""
    if isinstance(value, dict):
        return {name: translated(entry, translate, name) for name, entry in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(entry, dict) for entry in value):
            return [translated(entry, translate) for entry in value]
        return [translated(entry, translate) for entry in value] if key in TEXT_LISTS else value
    if isinstance(value, str) and key != "id":
        return translate(value)
    return value


def load(name: str, language: str | None = None) -> dict[str, Any]:
    """The texts of <name>.toml in a language (default: the one in use here)."""
    if language is None:
        look_up = functools.partial(pgettext, context(name))
    else:
        look_up = functools.partial(translation(language).pgettext, context(name))
    result: dict[str, Any] = translated(read(HERE / f"{name}.toml"), look_up)
    return result


def texts(data: dict[str, Any]) -> list[str]:
    """Every text of a parsed TOML file, once each, in the file's order."""
    found: dict[str, None] = {}  # a dict keeps the first place of each

    def note(text: str) -> str:
        found[text] = None
        return text

    translated(data, note)
    return list(found)


def extract(
    fileobj: IO[bytes], keywords: object, comment_tags: object, options: object
) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """Babel's extractor for these TOML files (babel.cfg): each text, in its file's context."""
    name = Path(str(getattr(fileobj, "name", ""))).name.removesuffix(".toml")
    for text in texts(tomllib.load(fileobj)):
        yield 0, "pgettext", (context(name), text), []


def message(section: str, key: str, **values: object) -> str:
    """One of the commands' short messages (messages.toml), with its placeholders filled."""
    return str(load("messages")[section][key]).format(**values)


# A line break between two wide characters (Chinese text and its punctuation): joining the
# lines there must not leave a space, as it would between two English words.
WIDE_BREAK = re.compile(r"(?<=[\u2e80-\uffef])[ \t]*\n\s*(?=[\u2e80-\uffef])")


def unwrapped(text: str) -> list[str]:
    """A text's paragraphs (blank-line separated), each joined onto one line."""
    blocks = (WIDE_BREAK.sub("", block) for block in text.strip().split("\n\n"))
    return [" ".join(block.split()) for block in blocks if block.strip()]


def paragraph(text: str, width: int = 78, indent: str = "") -> str:
    """Rewrap a text's paragraphs to width terminal columns (a Chinese character takes two)."""
    return "\n\n".join("\n".join(wrap(block, width, indent)) for block in unwrapped(text))
