"""One run: its transition timeline and its messages as a strip ordered by seq."""

from __future__ import annotations

import hashlib
from typing import Any

import htmx_flask  # type: ignore[import-untyped]
from flask import Blueprint, Response, abort, request

from ..i18n import _
from ..lab import lab
from ..rendering.fragments import render_view
from ..rendering.strip import message_strip
from ..safety.forms import FormError
from ..workbench.workbench import MOVING

bp = Blueprint("run_detail", __name__, url_prefix="/runs/<tree>")


def run_context(tree: str, run_id: str) -> dict[str, Any]:
    """What the run page and its fragment show."""
    bench = lab().bench(tree)
    try:
        run = bench.stored_run(run_id)
        messages = bench.store.messages_for_run(run_id)
    except FormError as error:  # never sent from this bench, or gone from the database
        abort(404, _("{tree} bench: {error}", tree=tree, error=error.message))
    except bench.failures as error:  # Postgres stopped, or the tree hung: the error page
        abort(503, bench.down(error))
    entries = bench.journal.entries(run_id)
    status = str(run.status)
    seen = (status, [(m.seq, m.role, m.content) for m in messages], len(entries))
    return {
        "tree": tree,
        "trees": list(lab().trees),
        "bench": bench,
        "run": run,
        "status": status,
        "entries": entries,
        "strip": message_strip(messages, entries),
        # Polled until the run ends, whoever moves it: a worker may pick a pending run up
        # at any time, and the page must then follow it.
        "moving": status in MOVING,
        "version": hashlib.sha256(repr(seen).encode()).hexdigest()[:16],
    }


@bp.get("/<run_id>")
def page(tree: str, run_id: str) -> Response:
    """The run page; polled as a fragment until the run ends (204 while nothing changed)."""
    context = run_context(tree, run_id)
    since = request.args.get("since")
    if since and htmx_flask.request.htmx and since == context["version"]:
        return Response(status=204)
    return render_view("run.html", "partials/run_body.html", context)
