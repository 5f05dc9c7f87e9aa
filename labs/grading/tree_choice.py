"""Which folder of a hand-in is graded: the lab tree by its name, never by the alphabet.

A hand-in may hold more than one lab tree (a folder with `__init__.py` and
two of `shared/`, `infra/`, `gateway/`, `worker/`): a solved `starter/` beside
the backup `old_starter/`, a nested copy, the course's `solution/`. The
graded one is the tree named as the instructor said (`starter`, or
`labs grade --tree NAME`), the shallowest of that name; the others are named
in the grade's note. A tree named `solution` is never graded: when it is
the only one, the hand-in is refused, saying so.

Without a tree of that name the hand-in is still graded when one tree is
plainly the learner's: the only other one, or the shallowest of them (its
nested copies below it), and the note says which was graded instead. A
hand-in that is the tree itself (its files at the top) is graded as it is.
Two trees at the same depth, none of them told apart by its name, are
refused, naming both: choosing by their names' order would grade the backup
as often as the work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from labs.term.i18n import _
from labs.trees.finding import SUBPACKAGES

from ..untrusted import clean_text
from .errors import BrokenSubmissionError
from .hand_in import walk
from .left_out import listed

TREE_NAME = "starter"  # what the learner copies and works in
SOLUTION = "solution"  # the reference answer: never graded, whatever the instructor names


@dataclass(frozen=True)
class Chosen:
    """The tree to grade in a hand-in, and what the note says about the choice."""

    tree: Path
    notes: list[str] = field(default_factory=list)


def tree_name_error(name: str) -> str:
    """Why a name cannot be the graded tree's folder name; "" when it can."""
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        return _("{name} is not a folder name: give the tree's folder name, e.g. starter").format(
            name=repr(name)
        )
    if name.casefold() == SOLUTION:
        return _("the solution is never graded: name the folder learners work in, e.g. starter")
    return ""


def lab_trees(root: Path) -> list[Path]:
    """Every folder under root (root included) that looks like a lab tree."""
    return [
        here
        for here, dirs, files in walk(root, capped=False)
        if "__init__.py" in files and sum(sub in dirs for sub in SUBPACKAGES) >= 2
    ]


def choose_tree(root: Path, wanted: str = TREE_NAME, top_name: str = "") -> Chosen:
    """The tree to grade in the hand-in taken in at root (named top_name where it came from).

    BrokenSubmissionError when there is none, when the only one is a
    solution, or when two at the same depth could each be the learner's.
    """
    trees = lab_trees(root)
    if not trees:
        raise BrokenSubmissionError(
            "no lab tree inside (a folder with __init__.py, shared/, infra/, gateway/, worker/)"
        )

    def name(tree: Path) -> str:
        return top_name if tree == root and top_name else tree.name

    def depth(tree: Path) -> int:
        return len(tree.relative_to(root).parts)

    def shown(trees: list[Path]) -> str:
        return listed(sorted(where(root, tree) for tree in trees))

    gradable = [tree for tree in trees if name(tree).casefold() != SOLUTION]
    named = [tree for tree in gradable if name(tree) == wanted]
    pool = named or gradable
    if not pool:
        raise BrokenSubmissionError(
            _(
                "could not grade: every lab tree in the hand-in is a solution ({trees}), and a "
                "solution is never graded: hand in your {wanted}/"
            ).format(trees=shown(trees), wanted=wanted)
        )
    shallowest = [tree for tree in pool if depth(tree) == min(map(depth, pool))]
    if len(shallowest) > 1:
        text = (
            _("could not grade: {count} folders named {wanted}/ at the same depth: {trees}")
            if named
            else _(
                "could not grade: no {wanted}/ in the hand-in, and {count} lab trees at the same "
                "depth: {trees}; keep one, or name it with --tree"
            )
        )
        raise BrokenSubmissionError(
            text.format(count=len(shallowest), wanted=wanted, trees=shown(shallowest))
        )
    chosen, notes = shallowest[0], []
    others = [tree for tree in trees if tree != chosen]
    if not named and chosen != root:
        notes.append(
            _("no {wanted}/ in the hand-in: graded {tree} instead").format(
                wanted=wanted, tree=where(root, chosen)
            )
        )
    elif others:
        notes.append(_("graded {tree}").format(tree=where(root, chosen)))
    if others:
        notes.append(
            _("other lab trees in the hand-in, not graded: {trees}").format(trees=shown(others))
        )
    return Chosen(chosen, notes)


def where(root: Path, tree: Path) -> str:
    """A tree as the learner knows it: its folder from the top of the hand-in."""
    if tree == root:
        return _("the hand-in's top folder")
    return clean_text(tree.relative_to(root).as_posix(), 200) + "/"
