"""The learner-facing texts of this package, read from the TOML files beside it.

English is `<name>.toml`. A translation is `<name>.<language>.toml` (say
`questions.zh_CN.toml`) holding the same keys; whatever it leaves out is
read from the English file, so a partial translation still shows every text.
Entries of a list of tables (`[[question]]`, `[[item]]`) are matched by id.
"""

from __future__ import annotations

import contextvars
import functools
import re
import tomllib
from pathlib import Path
from typing import Any

from labs.term.columns import wrap
from labs.term.i18n import ENGLISH, current

HERE = Path(__file__).resolve().parent
# The language of the request being served, set by the dashboard; unset in the terminal.
REQUEST_LANGUAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_language", default=None
)


def current_language() -> str:
    """The request's language in the dashboard, else the process's (labs.term.i18n's choice)."""
    if REQUEST_LANGUAGE.get():
        return str(REQUEST_LANGUAGE.get())
    return str(current())


def read(path: Path) -> dict[str, Any]:
    """One TOML file, parsed."""
    with path.open("rb") as file:
        return tomllib.load(file)


def merged(english: Any, translated: Any) -> Any:
    """The translated value where there is one, the English one elsewhere."""
    if isinstance(english, dict) and isinstance(translated, dict):
        return {key: merged(value, translated.get(key)) for key, value in english.items()}
    if isinstance(english, list) and isinstance(translated, list):
        by_id = {entry.get("id"): entry for entry in translated if isinstance(entry, dict)}
        return [
            merged(entry, by_id.get(entry.get("id"))) if isinstance(entry, dict) else entry
            for entry in english
        ]
    if translated is None or type(translated) is not type(english):
        return english
    return translated


def load(name: str, language: str | None = None) -> dict[str, Any]:
    """The texts of <name>.toml in a language (default: the lab's current one)."""
    return _load(HERE, name, language or current_language())


@functools.cache
def _load(folder: Path, name: str, language: str) -> dict[str, Any]:
    english = read(folder / f"{name}.toml")
    translation = folder / f"{name}.{language}.toml"
    if language == ENGLISH or not translation.is_file():
        return english
    result: dict[str, Any] = merged(english, read(translation))
    return result


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
