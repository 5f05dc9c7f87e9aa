"""The checks view: run the six (and the extras) on a tree and a store, see every trace.

The rows fill in while the child process runs: the results fragment polls
itself until the run has finished, then comes back without the trigger.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from labs.term.i18n import N_

from ..checks_run import start_checks
from ..i18n import Sentence, _, page_language
from ..jobs import BusyError
from ..lab import lab
from ..render import render_view

bp = Blueprint("checks", __name__, url_prefix="/checks")


def checks_context(tree: str, store: str, error: str | Sentence = "") -> dict[str, Any]:
    """What the page and the results fragment show for one tree and store."""
    the_lab = lab()
    return {
        "trees": list(the_lab.trees),
        "stores": the_lab.stores,
        "tree": tree,
        "store": store,
        "error": error,
        "run": the_lab.check_runs.get((tree, store)),
        "postgres_configured": the_lab.database_url is not None,
        "timeout": the_lab.check_timeout,
    }


def _chosen(source: Any) -> tuple[str, str, str]:
    """The tree and store asked for, falling back to starter/memory with an error."""
    the_lab = lab()
    tree, store = source.get("tree", "starter"), source.get("store", "memory")
    if tree not in the_lab.trees:
        choices = ", ".join(the_lab.trees)
        return (
            "starter",
            "memory",
            _("tree must be one of %(choices)s, not %(tree)s", choices=choices, tree=repr(tree)),
        )
    if store not in the_lab.stores:
        choices = ", ".join(the_lab.stores)
        if the_lab.database_url:
            said = _(
                "store must be one of %(choices)s, not %(store)s",
                choices=choices,
                store=repr(store),
            )
        else:
            said = _(
                "store must be one of %(choices)s (postgres needs DATABASE_URL to be set), "
                "not %(store)s",
                choices=choices,
                store=repr(store),
            )
        return tree, "memory", said
    return tree, store, ""


def render_checks(tree: str, store: str, error: str = "", status: int = 200) -> Response:
    """The checks page, or its results fragment alone for htmx (what polling asks for)."""
    return render_view(
        "checks.html", "partials/check_results.html", checks_context(tree, store, error), status
    )


@bp.get("")
def page() -> Response:
    """The checks page, with the last (or the running) results for the chosen tree and store."""
    tree, store, error = _chosen(request.args)
    return render_checks(tree, store, error, 400 if error else 200)


@bp.post("/run")
def run() -> Response:
    """Start the checks in a child process; the answer shows the rows as they arrive.

    One check run at a time: while one goes on, another is a 409 saying so.
    """
    the_lab = lab()
    tree, store, error = _chosen(request.form)
    if error:
        return render_checks(tree, store, error, 400)
    try:
        the_lab.jobs.claim(
            "checks", Sentence(N_("%(tree)s on the %(store)s store"), tree=tree, store=store)
        )
    except BusyError as busy:
        return render_checks(tree, store, str(busy), 409)
    the_lab.check_runs[(tree, store)] = start_checks(
        tree,
        the_lab.tree_spec(tree),
        store,
        database_url=the_lab.database_url,
        timeout=the_lab.check_timeout,
        output_limit=the_lab.check_output_limit,
        on_end=lambda: the_lab.jobs.release("checks"),
        language=page_language(),
    )
    return render_checks(tree, store)
