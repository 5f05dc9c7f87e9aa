"""The buttons of the runs view. Each is a POST that answers with the live fragment."""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, Response

from labs.checking.api import TreeDoesNotImportError

from ..i18n import _
from ..lab import lab
from ..safety import forms
from ..safety.forms import FormError
from ..workbench.demo_executor import REPLY
from ..workbench.moves import STATES
from ..workbench.tree_link import TreeNotAnsweringError
from ..workbench.workbench import Workbench
from .runs import PACES, render_runs

bp = Blueprint("run_actions", __name__, url_prefix="/runs/<tree>")
MAX_COPIES = 32


def act(tree: str, action: Callable[[Workbench], object]) -> Response:
    """Do one thing on the tree's bench; a bad field, a vanished run or a stopped store is a
    visible error."""
    bench = lab().bench(tree)
    try:
        action(bench)
    except FormError as error:
        bench.last = None  # the banner of an earlier button would read as this one's outcome
        return render_runs(tree, error.message, error.status)
    except bench.failures as error:  # Postgres stopped, or the tree hung: not a 500
        bench.last = None
        # A host just stopped for not answering is not started again for this answer, and a
        # line that stayed busy is not waited for twice.
        stopped = isinstance(error, TreeNotAnsweringError | TreeDoesNotImportError)
        return render_runs(tree, bench.down(error), 503, read=not stopped)
    return render_runs(tree)


@bp.post("/send")
def send(tree: str) -> Response:
    """POST /chat through the tree's gateway."""
    return act(
        tree,
        lambda bench: bench.send(
            forms.text("message"),
            forms.text("client_message_id", required=False, limit=100),
            forms.flag("fail"),
        ),
    )


@bp.post("/burst")
def burst(tree: str) -> Response:
    """Fire N identical requests at once."""
    return act(
        tree,
        lambda bench: bench.burst(forms.text("message"), forms.number("copies", 2, MAX_COPIES)),
    )


@bp.post("/demo")
def demo(tree: str) -> Response:
    """Switch the demo executor on (at a pace, its reply in the page's language) or off."""

    def switch(bench: Workbench) -> None:
        if forms.choice("switch", ["on", "off"]) == "on":
            factor = PACES[forms.choice("pace", list(PACES))]
            bench.executor.start(factor * lab().demo_pace, tuple(_(chunk) for chunk in REPLY))
        else:
            bench.executor.stop()

    return act(tree, switch)


@bp.post("/<run_id>/again")
def again(tree: str, run_id: str) -> Response:
    """Send the request that created the run once more."""
    return act(tree, lambda bench: bench.send_again(run_id))


@bp.post("/<run_id>/advance")
def advance(tree: str, run_id: str) -> Response:
    """Move the run to one of its allowed next states."""
    return act(tree, lambda bench: bench.advance(run_id, forms.choice("target", STATES)))


@bp.post("/<run_id>/force")
def force(tree: str, run_id: str) -> Response:
    """Try done -> running, the move the lesson forbids."""
    return act(tree, lambda bench: bench.force_back(run_id))


@bp.post("/<run_id>/duplicate-seq")
def duplicate_seq(tree: str, run_id: str) -> Response:
    """Write a second message at a seq the run already has."""
    return act(tree, lambda bench: bench.duplicate_seq(run_id))
