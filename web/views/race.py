"""The race view (Postgres only): check-then-insert against the unique constraint, side by side.

The button calls labs.lesson.race.run_race, the same code `python -m labs race`
runs, so the page and the command always tell the same story.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg2
from flask import Blueprint, Response

from labs.lesson.api import PathOutcome, RaceOutcome, run_race
from labs.pg.api import psycopg2_url
from labs.term.i18n import N_

from ..i18n import Sentence
from ..lab import lab
from ..rendering.fragments import render_view
from ..safety import forms
from ..safety.forms import FormError
from ..safety.jobs import BusyError

bp = Blueprint("race", __name__, url_prefix="/race")

# The defaults of `python -m labs race`; the limits keep one click from exhausting Postgres's
# connections (each request is a connection of its own) or holding the page for long.
DEFAULT_REQUESTS, MIN_REQUESTS, MAX_REQUESTS = 32, 2, 64
DEFAULT_DELAY_MS, MAX_DELAY_MS = 20, 1000


def race_context(
    requests: int = DEFAULT_REQUESTS,
    delay_ms: int = DEFAULT_DELAY_MS,
    *,
    outcome: RaceOutcome | None = None,
    seconds: float = 0.0,
    form_error: str = "",
    database_error: str = "",
) -> dict[str, Any]:
    """What the page and the result fragment show: the form's values and the last outcome."""
    paths: list[PathOutcome] = []
    if outcome is not None:
        paths = [path for path in (outcome.naive, outcome.guarded) if path is not None]
    return {
        "configured": lab().database_url is not None,
        "requests": requests,
        "delay_ms": delay_ms,
        "limits": {"requests": (MIN_REQUESTS, MAX_REQUESTS), "delay_ms": (0, MAX_DELAY_MS)},
        "outcome": outcome,
        "paths": paths,
        "milliseconds": seconds * 1000,
        "form_error": form_error,
        "database_error": database_error,
    }


def race_job(requests: int, delay_ms: int) -> Sentence:
    """How a race is named to a page told that it is going."""
    return Sentence(N_("{requests} requests, {delay} ms pause"), requests=requests, delay=delay_ms)


def render_race(context: dict[str, Any], status: int = 200) -> Response:
    """The race page, or its result fragment alone for htmx."""
    return render_view("race.html", "partials/race_result.html", context, status)


@bp.get("")
def page() -> Response:
    """The explanation, the form and an empty result."""
    return render_race(race_context())


@bp.post("")
def race() -> Response:
    """Run both paths under the same load and show what each left behind.

    One race at a time (each opens a connection per request): another is a 409 saying so.
    """
    the_lab = lab()
    database_url = the_lab.database_url
    if database_url is None:  # the notice says how to configure one; there is nothing to run
        return render_race(race_context(), 503)
    try:
        requests = forms.number("requests", MIN_REQUESTS, MAX_REQUESTS)
        delay_ms = forms.number("delay_ms", 0, MAX_DELAY_MS)
    except FormError as error:
        return render_race(race_context(form_error=error.message), 400)
    try:
        the_lab.jobs.claim("race", race_job(requests, delay_ms))
    except BusyError as busy:
        return render_race(race_context(requests, delay_ms, form_error=str(busy)), 409)
    try:
        psycopg2_url(database_url)  # says "not Postgres" plainly, before libpq's "invalid dsn"
        started = time.perf_counter()
        outcome = run_race(database_url, requests=requests, delay_ms=delay_ms)
    except (ValueError, psycopg2.Error) as error:  # down, wrong URL, out of connections
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return render_race(race_context(requests, delay_ms, database_error=reason), 503)
    finally:
        the_lab.jobs.release("race")
    return render_race(
        race_context(requests, delay_ms, outcome=outcome, seconds=time.perf_counter() - started)
    )
