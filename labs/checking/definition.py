"""What a check is: its number (or an extra check's key), title, function, default file.

The six are made with `@check(number, title, default_hint)` over their
function (checks/), the extra ones as ExtraCheck values (extra.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .context import CheckContext

CheckFunction = Callable[[CheckContext], None]


@dataclass(frozen=True)
class Check:
    """A numbered check: its title, its function, and the file its failures point to."""

    number: int
    title: str
    run: Callable[[CheckContext], None]
    default_hint: str
    second_process: bool = False  # compares with another process of the tree (launched early)

    @property
    def key(self) -> str:
        """What --only names it by: its number."""
        return str(self.number)


@dataclass(frozen=True)
class ExtraCheck:
    """A labelled extra check: shown after the six, never counted in them."""

    key: str
    title: str
    run: Callable[[CheckContext], None]
    default_hint: str
    second_process: bool = False  # compares with another process of the tree (launched early)

    @property
    def number(self) -> None:
        """Extra checks have no number."""
        return None


def check(
    number: int, title: str, default_hint: str, *, second_process: bool = False
) -> Callable[[CheckFunction], Check]:
    """Make the function below self-check number (checks/__init__.py lists them in order);
    second_process: it asks for ctx.second_process."""

    def make(run: CheckFunction) -> Check:
        return Check(number, title, run, default_hint, second_process)

    return make


def first_paragraph(docstring: str) -> str:
    """A docstring's first paragraph on one line: what a check says it does."""
    return " ".join(docstring.split("\n\n")[0].split())
