"""The runs view: the state machine with its counts, and a live table of runs."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, redirect, url_for

from ..i18n import Sentence
from ..lab import lab
from ..moves import LESSON_ALLOWED
from ..outcome import MARKS
from ..render import render_view
from ..state_graph import draw_graph

bp = Blueprint("runs", __name__, url_prefix="/runs")
# Multiples of the configured DEMO_PACE, so tests can make every pace fast.
PACES = {"fast": 0.25, "normal": 1.0, "slow": 2.5}


def runs_context(tree: str, error: str | Sentence = "", *, read: bool = True) -> dict[str, Any]:
    """What the runs page and its live fragment show for one tree's bench.

    read=False leaves the table empty: the tree's host was just stopped, and the
    notice says the next request starts a new one (this answer does not).
    """
    the_lab = lab()
    bench = the_lab.bench(tree)
    rows = []
    try:
        if read:
            bench.open()
            rows = bench.rows()
    except bench.failures as down:  # Postgres stopped, or the tree stopped answering
        rows, error = [], bench.down(down)
    graph = draw_graph(LESSON_ALLOWED, bench.state_counts(rows), bench.journal.edge_counts())
    return {
        "tree": tree,
        "trees": list(the_lab.trees),
        "bench": bench,
        "rows": rows,
        "graph": graph,
        "moving": bench.moving(rows),
        "journal": bench.journal.recent(),
        "error": error,
        "marks": MARKS,
        "executor": bench.executor,
        "paces": {name: round(factor * the_lab.demo_pace, 3) for name, factor in PACES.items()},
    }


def render_runs(
    tree: str, error: str | Sentence = "", status: int = 400, *, read: bool = True
) -> Response:
    """The runs page, or its live fragment for htmx (polls and buttons alike).

    With an error the answer carries status (400 for a bad field, 503 for a store
    that stopped answering); the page swaps both in, so the notice is seen.
    """
    context = runs_context(tree, error, read=read)
    if context["error"] and not error:  # the store went down while reading the rows
        status = 503
    return render_view(
        "runs.html", "partials/runs_live.html", context, status if context["error"] else 200
    )


@bp.get("")
def index() -> Response:
    """The starter's bench first: that is where the bugs show."""
    return redirect(url_for("runs.page", tree="starter"))  # type: ignore[return-value]


@bp.get("/<tree>")
def page(tree: str) -> Response:
    """The runs page for a tree (or its live fragment, which is what polling asks for)."""
    return render_runs(tree)
