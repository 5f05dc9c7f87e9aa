"""The dashboard: a Flask + htmx app that runs the checks and shows runs moving.

app.py, lab.py  the app factory, and the state its views share (lab.Lab)
i18n.py         the page's language; text kept as a Sentence, worded by each page
views/          one blueprint per page: checks, runs and their buttons, one run, diff,
                database, race, review
checkruns/      the checks run in a child process for the checks page, row by row
workbench/      one tree's live bench for the runs pages: its host, store and gateway,
                the lesson's moves, the demo executor, the journal of attempts
rendering/      a page or its htmx fragment, the live parts that changed, and the
                pictures laid out: sequence diagram, state graph, message strip
safety/         foreign hosts and cross-site writes refused, form fields read, the error
                page, one heavy job at a time
screenshots.py  python -m web.screenshots: the pictures in docs/

create_app (web/app.py) is imported when first asked for: the dashboard's check
process (web/checkruns/check_process.py) lives in this package too, and starts faster
without Flask and the views, which it never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'web' has no attribute {name!r}")
