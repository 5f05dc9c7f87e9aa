"""What a hand-in carries that is not the lesson's: left out as it is taken in, and named.

Learners hand in whatever their folder holds: a virtualenv (`venv/`, `.venv/`
or any folder with a `pyvenv.cfg`), `node_modules/`, a `.git/` (`.hg/`,
`.svn/`), a zip's `__MACOSX/`, the caches Python and the lab's tools write,
and now and then a log of 100 MB. None of it is graded, and counted against
the caps of taking the hand-in in (hand_in.py) it would refuse honest work.
So it is left out before the caps are counted (a folder's copy is never
walked, a zip's entry never unpacked) and named in the grade's note, except
the caches: every tree a learner ran a check in has them, and a note on
every row would hide the notes that matter.

A large file is left out only when it is not Python: a tree and its
migration are a few dozen small `.py` files, so a huge `.py` is kept and
counted, and refuses the hand-in by name when it is past the caps.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

from labs.sandbox.limits import MiB
from labs.term.i18n import N_, _

from ..untrusted import clean_text

LARGE_FILE = 1 * MiB  # a tree's largest file is a few kB; a screenshot still fits
LESSON_SUFFIXES = (".py", ".pyi")  # what grading reads of a tree and its migration
COMPILED = (".pyc", ".pyo")
VENV_MARK = "pyvenv.cfg"  # what `python -m venv` writes at a virtualenv's top
SHOWN = 6  # left-out paths named in a note before "and N more"


class Kind(StrEnum):
    """Why a folder or file is not the lesson's."""

    VIRTUALENV = N_("virtualenv")
    PACKAGES = N_("node packages")
    VERSION_CONTROL = N_("version control")
    METADATA = N_("macOS metadata")
    CACHE = N_("cache")
    LARGE = N_("large file")


FOLDERS = {
    "venv": Kind.VIRTUALENV,
    ".venv": Kind.VIRTUALENV,
    "node_modules": Kind.PACKAGES,
    ".git": Kind.VERSION_CONTROL,
    ".hg": Kind.VERSION_CONTROL,
    ".svn": Kind.VERSION_CONTROL,
    "__MACOSX": Kind.METADATA,
    "__pycache__": Kind.CACHE,
    ".mypy_cache": Kind.CACHE,
    ".pytest_cache": Kind.CACHE,
    ".ruff_cache": Kind.CACHE,
}


@dataclass(frozen=True)
class LeftOut:
    """One folder or file of a hand-in left out, by its path from the hand-in's top."""

    path: str  # a folder's ends with "/"
    kind: Kind
    size: int = 0  # a large file's, in bytes

    def __str__(self) -> str:
        why = megabytes(self.size) if self.kind is Kind.LARGE else _(self.kind.value)
        return _("{path} ({why})").format(path=clean_text(self.path, 200), why=why)


def folder_kind(name: str, *, holds_venv_mark: bool) -> Kind | None:
    """Why a folder of this name is left out (a virtualenv whatever its name), or None."""
    if holds_venv_mark:
        return Kind.VIRTUALENV
    return FOLDERS.get(name)


def left_out_folder(
    folder: PurePosixPath, venvs: set[PurePosixPath]
) -> tuple[PurePosixPath, Kind] | None:
    """The outermost folder on the way to folder that is left out, and why; None if none is.

    venvs are the folders known to hold a pyvenv.cfg.
    """
    for depth in range(1, len(folder.parts) + 1):
        here = PurePosixPath(*folder.parts[:depth])
        kind = folder_kind(here.name, holds_venv_mark=here in venvs)
        if kind is not None:
            return here, kind
    return None


def file_kind(name: str, size: int) -> Kind | None:
    """Why a file is left out (compiled, or large and not Python), or None when it is kept."""
    if name.endswith(COMPILED):
        return Kind.CACHE
    if size > LARGE_FILE and not name.endswith(LESSON_SUFFIXES):
        return Kind.LARGE
    return None


def megabytes(size: int) -> str:
    """A size as people say it: 100 MB, 1.5 MB."""
    value = size / MiB
    return _("{size} MB").format(size=f"{value:.0f}" if value >= 10 else f"{value:.1f}")


def listed(items: list[str], shown: int = SHOWN) -> str:
    """The first few items, then how many more there are."""
    text = ", ".join(items[:shown])
    if len(items) > shown:
        return _("{items} and {count} more").format(items=text, count=len(items) - shown)
    return text


def left_out_note(items: list[LeftOut]) -> str:
    """The note naming what was left out, large files first; "" when only caches were."""
    named = sorted(
        (item for item in items if item.kind is not Kind.CACHE),
        key=lambda item: (item.kind is not Kind.LARGE, -item.size),
    )
    if not named:
        return ""
    return _("left out as not the lesson's, never graded: {items}").format(
        items=listed([str(item) for item in named])
    )
