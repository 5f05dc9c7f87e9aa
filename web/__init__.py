"""The dashboard: a Flask + htmx app that runs the checks and shows runs moving.

app.py, lab.py  the app factory, and the state its views share (lab.Lab)
i18n.py         the page's language; text kept as a Sentence, worded by each page
views/          one blueprint per page: checks, runs and their buttons, one run, diff,
                database, race, review
checkruns/      the checks page's runs: the checks driven from a thread, row by row
workbench/      one tree's live bench for the runs pages: its host, store and gateway,
                the lesson's moves, the demo executor, the journal of attempts
rendering/      a page or its htmx fragment, the live parts that changed, and the
                pictures laid out: sequence diagram, state graph, message strip
safety/         foreign hosts and cross-site writes refused, form fields read, the error
                page, one heavy job at a time
screenshots.py  python -m web.screenshots: the pictures in docs/
"""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
