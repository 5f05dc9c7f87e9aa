"""The runs view: the state machine with its counts, and a live table of runs."""

from __future__ import annotations

from typing import Any

import htmx_flask  # type: ignore[import-untyped]
from flask import Blueprint, Response, redirect, request, url_for

from ..i18n import Sentence
from ..lab import lab
from ..moves import LESSON_ALLOWED
from ..outcome import MARKS
from ..render import render_view
from ..state_graph import draw_graph

bp = Blueprint("runs", __name__, url_prefix="/runs")
# Multiples of the configured DEMO_PACE, so tests can make every pace fast.
PACES = {"fast": 0.25, "normal": 1.0, "slow": 2.5}
# Runs in one page of the table, the newest first; the older ones are a link away.
PAGE = 50


def runs_context(
    tree: str, error: str | Sentence = "", *, read: bool = True, page: int = 1
) -> dict[str, Any]:
    """What the runs page and its live fragment show for one tree's bench.

    The table shows one page of runs, PAGE of them, the newest first; the graph
    counts them all. read=False leaves the table empty: the tree's host was just
    stopped, and the notice says the next request starts a new one (this answer
    does not).
    """
    the_lab = lab()
    bench = the_lab.bench(tree)
    version = bench.version()  # taken first: a change made while reading is fetched next time
    rows, unread = [], False
    try:
        if read:
            bench.open()
            rows = bench.rows()
    except bench.failures as down:  # Postgres stopped, or the tree stopped answering
        rows, error, unread = [], bench.down(down), True
    graph = draw_graph(LESSON_ALLOWED, bench.state_counts(rows), bench.journal.edge_counts())
    pages = max(1, -(-len(rows) // PAGE))
    page = min(max(page, 1), pages)
    return {
        "tree": tree,
        "trees": list(the_lab.trees),
        "bench": bench,
        "rows": rows[(page - 1) * PAGE : page * PAGE],
        "total": len(rows),
        "page": page,
        "pages": pages,
        "version": version,
        "graph": graph,
        "moving": bench.moving(rows),
        "journal": bench.journal.recent(),
        "error": error,
        "unread": unread,  # the rows could not be read: none and zero would be untrue
        "marks": MARKS,
        "executor": bench.executor,
        "paces": {name: round(factor * the_lab.demo_pace, 3) for name, factor in PACES.items()},
    }


def render_runs(
    tree: str, error: str | Sentence = "", status: int = 400, *, read: bool = True, page: int = 1
) -> Response:
    """The runs page, or its live fragment for htmx (polls and buttons alike).

    With an error the answer carries status (400 for a bad field, 503 for a store
    that stopped answering); the page swaps both in, so the notice is seen.
    """
    context = runs_context(tree, error, read=read, page=page)
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
    """The runs page for a tree (or its live fragment, which is what polling asks for).

    A poll that brings back the token of what it shows (`since`) while nothing changed
    gets 204 and no body, without a look at the store.
    """
    since = request.args.get("since")
    if since and htmx_flask.request.htmx and since == lab().bench(tree).version():
        return Response(status=204)
    return render_runs(tree, page=request.args.get("page", 1, type=int))
