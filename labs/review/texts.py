"""The learner-facing texts of this package, read from the TOML files beside it."""

from __future__ import annotations

import functools
import textwrap
import tomllib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The parsed contents of <name>.toml in this folder."""
    with (HERE / f"{name}.toml").open("rb") as file:
        return tomllib.load(file)


def message(section: str, key: str, **values: object) -> str:
    """One of the commands' short messages (messages.toml), with its placeholders filled."""
    return str(load("messages")[section][key]).format(**values)


def paragraph(text: str, width: int = 78, indent: str = "") -> str:
    """Rewrap a text's paragraphs (blank-line separated) to width, with an indent."""
    blocks = [" ".join(block.split()) for block in text.strip().split("\n\n")]
    return "\n\n".join(
        textwrap.fill(block, width, initial_indent=indent, subsequent_indent=indent)
        for block in blocks
        if block
    )
