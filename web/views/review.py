"""The Review page: the day's questions answered in your own words, and the day's checklist.

The texts, the saved answers and marks, and the checklist's verifications are
labs.review's, the same as `python -m labs review` and `python -m labs
checklist`, so the page and the terminal agree. Answers and marks are kept
in the lab's local state folder.

Verifying the checklist runs the checks and mypy on the learner's tree, so it
is a POST (refused from another site's page, safety/cross_site.py) and takes the
dashboard's one slot for check runs (safety/jobs.py): a GET never runs code, and
four verifications at once are one run and three "busy" answers.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Blueprint, Response, abort, current_app, request

from labs.review.api import checklist, questions, texts
from labs.term.i18n import N_

from ..i18n import Sentence, _
from ..lab import lab
from ..rendering.fragments import render_view, wants_fragment
from ..safety import forms
from ..safety.forms import FormError
from ..safety.jobs import BusyError

bp = Blueprint("review", __name__, url_prefix="/review")


ANSWER_LIMIT = 5000
# The last checklist per tree: the page shows it and a tick redraws it, never rerunning checks.
_LAST_KEY = "review_checklists"
_lock = threading.Lock()


def last_verified() -> list[checklist.Item] | None:
    """The starter's checklist as last verified in this dashboard, or None before the first."""
    with _lock:
        found: list[checklist.Item] | None = current_app.extensions.get(_LAST_KEY, {}).get(
            lab().tree_spec("starter")
        )
    return found


def question_row(
    question: questions.Question, saved: questions.Saved, revealed: bool
) -> dict[str, Any]:
    """One question as the page shows it: the text, your answer and mark, the analysis if shown.

    The texts are joined onto single lines as the terminal joins them: a line break
    inside a Chinese sentence would otherwise show as a space in the page.
    """
    return {
        "question": question,
        "text": " ".join(texts.unwrapped(question.question)),
        "follow_up": " ".join(texts.unwrapped(question.follow_up)),
        "saved": saved,
        "revealed": revealed,
        "paragraphs": texts.unwrapped(question.analysis),
        "points": [" ".join(texts.unwrapped(point)) for point in question.key_points],
    }


def review_context(revealed: str = "", form_error: str = "", error_for: str = "") -> dict[str, Any]:
    """Every question with its saved answer; `revealed` names the one whose analysis shows."""
    saved = questions.saved_answers()
    rows = [
        question_row(q, saved.get(q.id, questions.Saved()), q.id == revealed)
        for q in questions.all_questions()
    ]
    return {
        "rows": rows,
        "labels": questions.labels(),
        "core_got": questions.core_got(),
        "core_total": sum(1 for q in questions.all_questions() if q.core),
        "core_needed": questions.CORE_NEEDED,
        "form_error": form_error,
        "error_for": error_for,
        "items": [],
        "verified": False,
        "done": 0,
        "quick": False,
        "checklist_labels": texts.load("checklist")["labels"],
        "progress_oob": False,
        "busy": "",
    }


def one_question(question_id: str, status: int = 200, form_error: str = "") -> Response:
    """The page, or the one question's fragment for htmx: revealed, or with the form's error."""
    revealed = "" if form_error else question_id
    context = review_context(revealed, form_error, question_id if form_error else "")
    found = [row for row in context["rows"] if row["question"].id == question_id]
    if not found:
        abort(404, _("no review question {id}", id=repr(question_id)))
    # An htmx answer also refreshes the count of questions marked "got it", out of band.
    oob = wants_fragment()
    return render_view(
        "review.html",
        "partials/review_question.html",
        {**context, "row": found[0], "progress_oob": oob},
        status,
    )


@bp.get("")
def page() -> Response:
    """The questions, each with a box for your answer; below, the checklist as last verified.

    Nothing is verified here: verifying takes the check slot for seconds, so it waits
    for the learner's Verify.
    """
    items = last_verified()
    context = {**review_context(), **checklist_context(items or []), "verified": items is not None}
    return render_view("review.html", "partials/review_questions.html", context)


@bp.post("/<question_id>")
def answer(question_id: str) -> Response:
    """Keep the answer typed, and reveal the analysis and the key points."""
    try:
        questions.find(question_id)
    except KeyError as error:
        abort(404, error.args[0])
    try:
        text = forms.text("answer", required=False, limit=ANSWER_LIMIT)
    except FormError as error:
        return one_question(question_id, 400, error.message)
    if not text:  # the analysis is for comparing: there must be an answer to compare
        return one_question(question_id, 400, questions.labels()["answer_first"])
    questions.save(question_id, text, None)
    return one_question(question_id)


@bp.post("/<question_id>/mark")
def mark(question_id: str) -> Response:
    """Keep how the learner judged their answer: got it, partly or not yet."""
    try:
        question = questions.find(question_id)
    except KeyError as error:
        abort(404, error.args[0])
    try:
        chosen = forms.choice("mark", questions.MARKS)
    except FormError as error:
        return one_question(question.id, 400, error.message)
    previous = questions.saved_answers().get(question.id, questions.Saved())
    questions.save(question.id, previous.answer, chosen)
    return one_question(question.id)


def checklist_context(items: list[checklist.Item]) -> dict[str, Any]:
    """The checklist's items and the words around them."""
    return {
        "items": items,
        "done": sum(item.status == checklist.ItemStatus.DONE for item in items),
        "checklist_labels": texts.load("checklist")["labels"],
        "quick": request.values.get("quick") == "1",
    }


def verified(quick: bool) -> list[checklist.Item]:
    """Run the checklist's verifications for the learner's tree, and remember the result.

    BusyError when a check run (or another verification) holds the slot.
    """
    the_lab = lab()
    settings = checklist.Settings(
        tree=the_lab.tree_spec("starter"), database_url=the_lab.database_url, quick=quick
    )
    with the_lab.jobs.hold("checks", Sentence(N_("the review checklist"))):
        items = checklist.checklist(settings)
    with _lock:
        current_app.extensions.setdefault(_LAST_KEY, {})[settings.tree] = items
    return items


def busy_checklist(busy: BusyError) -> Response:
    """The checklist's place, saying what holds the slot, with a 409."""
    return render_view(
        "review.html",
        "partials/review_checklist.html",
        {**review_context(), **checklist_context([]), "busy": str(busy)},
        409,
    )


@bp.post("/checklist")
def checklist_fragment() -> Response:
    """The checklist, verified now (the checks and the typecheck run in subprocesses)."""
    try:
        items = verified(request.values.get("quick") == "1")
    except BusyError as busy:
        return busy_checklist(busy)
    return render_view(
        "review.html",
        "partials/review_checklist.html",
        {**review_context(), **checklist_context(items), "verified": True},
    )


@bp.post("/checklist/tick")
def tick() -> Response:
    """Tick or untick an item yourself; the last verification is shown again, not rerun."""
    try:
        item_id = forms.choice("item", [entry["id"] for entry in checklist.items_data()])
    except FormError as error:
        abort(400, error.message)
    ticked = forms.flag("ticked")
    checklist.tick(item_id, ticked)
    items = last_verified()
    if items is None:
        try:
            items = verified(quick=True)
        except BusyError as busy:
            return busy_checklist(busy)
    for item in items:
        if item.id == item_id:
            item.ticked = ticked
    return render_view(
        "review.html",
        "partials/review_checklist.html",
        {**review_context(), **checklist_context(items), "verified": True},
    )
