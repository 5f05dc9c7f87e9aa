"""The diff view: starter against solution, hunk by hunk, under the check each serves."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from labs.checking.api import CHECKS
from labs.term.i18n import N_
from labs.trees.api import tree_root
from labs.trees.diff import tree_diff  # imported by name: the release leaves it out

from ..i18n import Sentence, Verbatim, _, translated
from ..lab import lab
from ..rendering.fragments import render_view

bp = Blueprint("diff", __name__, url_prefix="/diff")
TITLES = {check.number: check.title for check in CHECKS}


def diff_context() -> dict[str, Any]:
    """The hunks grouped by check, or the reason there are none."""
    trees = lab().trees
    try:
        by_check = tree_diff(tree_root(trees["starter"]), tree_root(trees["solution"]))
    except Exception as error:  # a tree mid-edit may not parse; say so instead of failing
        said = Verbatim(f"{type(error).__name__}: {error}")
        return {
            "groups": [],
            "error": Sentence(N_("the diff could not be made: {error}"), error=said),
        }
    groups = [
        (
            number,
            translated(TITLES[number]) if number in TITLES else _("check {number}", number=number),
            hunks,
        )
        for number, hunks in by_check.items()
    ]
    return {"groups": groups, "error": ""}


@bp.get("")
def page() -> Response:
    """Every hunk, under its check."""
    return render_view("diff.html", "partials/diff_hunks.html", diff_context())
