"""Paths as the learner knows them: the grader's copies of a tree named as in the hand-in.

The grader never runs a hand-in where it lies. `labs grade` takes each
hand-in into scratch space and moves its tree out to a folder of a name of
its own (graded_s3_ada, a name no learner writes), the regions are spliced
into a copy of the starter (lab-spliced-…/), and each sandbox copies that
again (lab-sandbox-…/). A hint, a traceback or a typecheck error names
whichever copy it came from, and none of them is on the learner's disk.
Every copy keeps the graded folder's name, so a path is known by where it
starts and written again from the top of the hand-in:
`starter/shared/keys.py:14`, the path the learner opens.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from .migration import VERSIONS

# A path begins at the start of a line or after a space, a quote, a bracket, = or a comma.
STARTS = r"(?<![^\s\"'(\[=,])"
PATH_CHARS = r"[^\s\"'()\[\]<>|,]"
# The folder a sandbox copies the tree (or the migration's versions folder) into.
SANDBOX_COPY = STARTS + PATH_CHARS + r"*/lab-sandbox-[^/\s\"']+/"


class Places:
    """The grader's folders for one submission, each with the name the learner knows it by."""

    def __init__(
        self, copy_name: str, tree: str, migrations: str, folders: Mapping[Path, str]
    ) -> None:
        self.tree = tree  # the tree's path from the top of the hand-in
        self.migrations = migrations  # where the learner's migration goes, named the same way
        # The longest first: a folder inside another is matched before the one around it.
        pairs = sorted(folders.items(), key=lambda pair: -len(str(pair[0])))
        self._renames = [
            (re.compile(r"(?<![\w./-])" + re.escape(str(folder)) + r"(/|(?![\w.-]))"), shown)
            for folder, shown in pairs
        ]
        # A copy's own folder name, in a sandbox or at the start of a relative path (mypy's).
        self._renames += [
            (re.compile(SANDBOX_COPY + re.escape(copy_name) + "(/)"), tree),
            (re.compile(SANDBOX_COPY + "versions(/)"), migrations),
            (re.compile(STARTS + re.escape(copy_name) + "(/)"), tree),
        ]
        if copy_name != os.path.basename(tree):
            # A name of the grader's own is nowhere but in its copies: a path ending in it is
            # one of them however it is written, relative to the grader's folder too.
            anywhere = STARTS + "(?:" + PATH_CHARS + "*/)?" + re.escape(copy_name) + "(/)"
            self._renames.append((re.compile(anywhere), tree))

    def shown(self, text: str) -> str:
        """text with each path into one of the grader's folders written as the learner's."""
        for pattern, name in self._renames:
            text = pattern.sub(partial(renamed, name), text)
        return text


def renamed(name: str, match: re.Match[str]) -> str:
    """A folder's learner name and the slash the path had after it ("" for the hand-in's top)."""
    slash = match[1]
    if not name:
        return "" if slash else "."
    return name + slash


def tree_places(
    tree: Path,
    migrations: Path,
    copies: Sequence[Path] = (),
    migration_copies: Sequence[Path] = (),
    *,
    shown_as: str | None = None,
    hand_in: Path | None = None,
) -> Places:
    """The places of a tree and its migration folder, and of the grader's copies of each.

    shown_as is the tree's path from the top of the hand-in (default: its
    folder name); hand_in is where the hand-in was taken in, when the grader
    copied it (`labs grade`): paths under it are shown from its top.
    """
    shown = shown_as if shown_as is not None else tree.name
    beside = migrations_shown(tree, migrations, shown, hand_in)
    folders = {folder: shown for folder in [tree, *copies]}
    folders |= {folder: beside for folder in [migrations, *migration_copies]}
    if hand_in is not None:
        folders[hand_in] = ""
    return Places(tree.name, shown, beside, folders)


def migrations_shown(tree: Path, migrations: Path, shown: str, hand_in: Path | None) -> str:
    """The migration folder as the learner names it: from the hand-in's top, or beside the tree."""
    if hand_in is not None and migrations.is_relative_to(hand_in):
        return migrations.relative_to(hand_in).as_posix()
    if hand_in is not None and migrations.is_relative_to(tree):  # moved out with the tree
        return os.path.join(shown, migrations.relative_to(tree).as_posix())
    if migrations == tree.parent / VERSIONS / tree.name:
        return os.path.join(os.path.dirname(shown), VERSIONS, os.path.basename(shown) or tree.name)
    return str(migrations)
