"""The runs view: the state machine with its counts, and a live table of runs."""

from __future__ import annotations

from typing import Any

import htmx_flask  # type: ignore[import-untyped]
from flask import Blueprint, Response, redirect, render_template, request, url_for
from markupsafe import Markup

from ..i18n import Sentence
from ..lab import lab
from ..rendering.fragments import render_view, wants_fragment
from ..rendering.live_parts import Changes, Drawing, changes
from ..rendering.state_graph import draw_graph
from ..workbench.moves import LESSON_ALLOWED
from ..workbench.outcome import MARKS

bp = Blueprint("runs", __name__, url_prefix="/runs")
# Multiples of the configured DEMO_PACE, so tests can make every pace fast.
PACES = {"fast": 0.25, "normal": 1.0, "slow": 2.5}
# Runs in one page of the table, the newest first; the older ones are a link away.
PAGE = 50


def runs_context(
    tree: str, error: str | Sentence = "", *, read: bool = True, page: int = 1, retry: bool = False
) -> dict[str, Any]:
    """What the runs page and its live fragment show for one tree's bench.

    The table shows one page of runs, PAGE of them, the newest first; the graph
    counts them all. read=False leaves the table empty: the tree's host was just
    stopped, and the notice says the next request starts a new one (this answer
    does not). retry lets a bench that fell back to memory try Postgres again.
    """
    the_lab = lab()
    bench = the_lab.bench(tree)
    version = bench.version()  # taken first: a change made while reading is fetched next time
    rows, unread = [], False
    try:
        if read:
            bench.open(retry=retry)
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


# The parts of the live section, each drawn into a box of its own (#runs-<part>).
PARTS = {
    "notices": "partials/runs_notices.html",
    "executor": "partials/runs_executor.html",
    "graph": "partials/state_graph.html",
    "table": "partials/runs_table.html",
    "journal": "partials/runs_journal.html",
}
# Where the table's frame takes its rows: the frame is compared without them.
ROWS_HERE = "<!-- rows -->"


def draw(context: dict[str, Any]) -> Drawing:
    """Draw each part and each row of the live section on its own."""
    rows = [
        (row.id, render_template("partials/runs_row.html", r=row, oob=False, **context))
        for row in context["rows"]
    ]
    parts = {
        name: render_template(template, row_html=Markup(ROWS_HERE), **context)
        for name, template in PARTS.items()
    }
    return Drawing(parts, rows)


def render_runs(
    tree: str,
    error: str | Sentence = "",
    status: int = 400,
    *,
    read: bool = True,
    page: int = 1,
    retry: bool = False,
) -> Response:
    """The runs page, or for htmx its live section, or only what changed in it.

    With an error the answer carries status (400 for a bad field, 503 for a store
    that stopped answering); the page swaps both in, so the notice is seen. An htmx
    request naming what its page shows (`shown`, a digest this bench remembers) gets
    the poller and, out of band, the parts and rows that differ; any other gets the
    whole section.
    """
    context = runs_context(tree, error, read=read, page=page, retry=retry)
    if context["error"] and not error:  # the store went down while reading the rows
        status = 503
    status = status if context["error"] else 200
    remembered = context["bench"].shown
    before = remembered.get(request.values.get("shown"))
    drawing = draw(context)
    now = drawing.fingerprint()
    context["shown"] = remembered.remember(now)
    rows = dict(drawing.rows)
    all_rows = Markup("".join(rows.values()))
    context["parts"] = {
        name: Markup(text.replace(ROWS_HERE, all_rows)) for name, text in drawing.parts.items()
    }
    htmx = wants_fragment()
    if htmx and before is not None:
        return changes_answer(context, changes(before, now, rows_in="table"), rows, status)
    answer = render_view("runs.html", "partials/runs_live.html", context, status)
    if htmx:  # the whole section, whichever part of it asked (the poller asks for itself)
        answer.headers["HX-Retarget"] = "#runs-live"
        answer.headers["HX-Reswap"] = "outerHTML"
    return answer


def changes_answer(
    context: dict[str, Any], sent: Changes, rows: dict[str, str], status: int
) -> Response:
    """The poller, and out of band the parts and rows that changed (rows drawn in `rows`)."""
    by_id = {row.id: row for row in context["rows"]}
    body = render_template(
        "partials/runs_changes.html",
        changed_parts=[(name, context["parts"][name]) for name in sent.parts],
        added_rows=Markup("".join(rows[run_id] for run_id in sent.added)),
        changed_rows=Markup(
            "".join(
                render_template("partials/runs_row.html", r=by_id[run_id], oob=True, **context)
                for run_id in sent.changed
            )
        ),
        removed_rows=sent.removed,
        **context,
    )
    answer: Response = htmx_flask.make_response(body, status)
    answer.headers["HX-Retarget"] = "#runs-poll"
    answer.headers["HX-Reswap"] = "outerHTML"
    return answer


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
    # A page loaded (not a poll) is where a bench that fell back to memory tries Postgres again.
    retry = not htmx_flask.request.htmx
    return render_runs(tree, page=request.args.get("page", 1, type=int), retry=retry)
