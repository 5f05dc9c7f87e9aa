"""The checks view: run the six (and the extras) on a tree and a store, see every trace.

The rows fill in while the checks run. The page polls a small status
answer: nothing (204) while no row changed, else the rows that did and the
summary, swapped in out of band, so a row the reader opened stays open and
the live region stays in place. A row's diagram is fetched when it is opened.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import Blueprint, Response, abort, redirect, request, url_for

from labs.checking.api import StoreKind
from labs.term.i18n import N_

from ..checkruns.check_run import CheckRun, start_checks
from ..checkruns.rows import CheckRow
from ..i18n import Sentence, _
from ..lab import lab
from ..rendering.fragments import render_view, wants_fragment
from ..safety.jobs import BusyError

bp = Blueprint("checks", __name__, url_prefix="/checks")


def checks_context(tree: str, store: str, error: str | Sentence = "") -> dict[str, Any]:
    """What the page, the results section and the status answer show for one tree and store."""
    the_lab = lab()
    run = the_lab.check_runs.get((tree, store))
    return {
        "trees": list(the_lab.trees),
        "stores": the_lab.stores,
        "tree": tree,
        "store": store,
        "error": error,
        # A copy: the run's thread replaces its rows meanwhile, and one answer shows one moment.
        "run": replace(run) if run is not None else None,
        "postgres_configured": the_lab.database_url is not None,
        "timeout": the_lab.check_timeout,
        "changed": None,  # every row (the status answer names the ones that changed)
    }


def _chosen(source: Any) -> tuple[str, str, str]:
    """The tree and store asked for, falling back to starter/memory with an error."""
    the_lab = lab()
    tree, store = source.get("tree", "starter"), source.get("store", StoreKind.MEMORY)
    if tree not in the_lab.trees:
        choices = ", ".join(the_lab.trees)
        return (
            "starter",
            StoreKind.MEMORY,
            _("tree must be one of {choices}, not {tree}", choices=choices, tree=repr(tree)),
        )
    if store not in the_lab.stores:
        choices = ", ".join(the_lab.stores)
        if the_lab.database_url:
            said = _(
                "store must be one of {choices}, not {store}",
                choices=choices,
                store=repr(store),
            )
        else:
            said = _(
                "store must be one of {choices} (postgres needs DATABASE_URL to be set), "
                "not {store}",
                choices=choices,
                store=repr(store),
            )
        return tree, StoreKind.MEMORY, said
    return tree, store, ""


def render_checks(tree: str, store: str, error: str = "", status: int = 200) -> Response:
    """The checks page, or its results section alone for htmx."""
    return render_view(
        "checks.html", "partials/check_results.html", checks_context(tree, store, error), status
    )


@bp.get("")
def page() -> Response:
    """The checks page, with the last (or the running) results for the chosen tree and store."""
    tree, store, error = _chosen(request.args)
    return render_checks(tree, store, error, 400 if error else 200)


@bp.get("/run")
def run_page() -> Response:
    """An address bar or a bookmark holding /checks/run gets the checks page, not a 405."""
    values: dict[str, Any] = request.args.to_dict()
    return redirect(url_for("checks.page", **values))  # type: ignore[return-value]


@bp.post("/run")
def run() -> Response:
    """Start the checks; the answer shows the rows as they arrive.

    One check run at a time: while one goes on, another is a 409 saying so. The
    address bar is left at the page of this tree and store, never at /checks/run,
    so reloading it (or switching the language) shows the same run.
    """
    the_lab = lab()
    tree, store, error = _chosen(request.form)
    if error:
        return render_checks(tree, store, error, 400)
    try:
        the_lab.jobs.claim(
            "checks", Sentence(N_("{tree} on the {store} store"), tree=tree, store=store)
        )
    except BusyError as busy:
        return render_checks(tree, store, str(busy), 409)
    the_lab.check_runs[(tree, store)] = start_checks(
        tree,
        the_lab.tree_spec(tree),
        store,
        database_url=the_lab.database_url,
        timeout=the_lab.check_timeout,
        check_timeout=the_lab.check_each_timeout,
        on_end=lambda: the_lab.jobs.release("checks"),
    )
    page_url = url_for("checks.page", tree=tree, store=store)
    if not wants_fragment():  # a form posted without htmx: see the page at its own address
        return redirect(page_url, 303)  # type: ignore[return-value]
    answer = render_checks(tree, store)
    answer.headers["HX-Replace-Url"] = page_url
    return answer


@bp.get("/status")
def status() -> Response:
    """What changed since the page's last look: 204 for nothing, else the changed rows.

    `run` and `seen` are what the page shows (CheckRun.id and CheckRun.seen). A page
    showing another run than the current one gets the whole results section instead.
    """
    tree, store, error = _chosen(request.args)
    context = checks_context(tree, store, error)
    run: CheckRun | None = context["run"]
    seen = request.args.get("seen", "")
    if error or run is None or run.id != request.args.get("run"):
        answer = render_view("checks.html", "partials/check_results.html", context)
        answer.headers["HX-Retarget"] = "#check-results"
        answer.headers["HX-Reswap"] = "outerHTML"
        return answer
    if run.seen == seen:
        return Response(status=204)
    letters = run.seen
    context["changed"] = {
        row.key
        for index, row in enumerate(run.rows)
        if index >= len(seen) or seen[index] != letters[index]
    }
    return render_view("checks.html", "partials/check_status.html", context)


@bp.get("/diagram/<key>")
def diagram(key: str) -> Response:
    """One finished row's sequence diagram and its table of steps (fetched when opened)."""
    tree, store, error = _chosen(request.args)
    run = lab().check_runs.get((tree, store))
    if error or run is None or run.id != request.args.get("run"):
        abort(404, _("these results were replaced by a newer run: reload the page"))
    row: CheckRow | None = next((r for r in run.rows if r.key == key), None)
    if row is None:
        abort(404, _("no check {key} in this run", key=repr(key)))
    return render_view(
        "checks.html", "partials/check_diagram.html", {**checks_context(tree, store), "row": row}
    )
