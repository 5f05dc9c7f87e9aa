"""The error page: every HTTP error, the dashboard's own or werkzeug's, in the page's language."""

from __future__ import annotations

from flask import Flask, render_template
from htmx_flask import request as htmx_request  # type: ignore[import-untyped]
from werkzeug.exceptions import HTTPException

from labs.term.i18n import N_

from ..i18n import translated

# The error names the dashboard answers with, marked so the catalog has them for its error page.
ERROR_NAMES = (
    N_("Bad Request"),
    N_("Forbidden"),
    N_("Not Found"),
    N_("Method Not Allowed"),
    N_("Conflict"),
    N_("Internal Server Error"),
    N_("Service Unavailable"),
)
# Werkzeug's own descriptions, for an error raised without one of the dashboard's (a page
# that does not exist, a wrong method), marked so the catalog has them too.
ERROR_DESCRIPTIONS = (
    N_("The browser (or proxy) sent a request that this server could not understand."),
    N_(
        "You don't have the permission to access the requested resource. It is either "
        "read-protected or not readable by the server."
    ),
    N_(
        "The requested URL was not found on the server. If you entered the URL manually "
        "please check your spelling and try again."
    ),
    N_("The method is not allowed for the requested URL."),
    N_(
        "A conflict happened while processing the request. The resource might have been "
        "modified while the request was being processed."
    ),
    N_(
        "The server encountered an internal error and was unable to complete your request. "
        "Either the server is overloaded or there is an error in the application."
    ),
    N_(
        "The server is temporarily unable to service your request due to maintenance "
        "downtime or capacity problems. Please try again later."
    ),
)


def register_error_pages(app: Flask) -> None:
    """Answer every HTTP error with the error page (its partial alone for htmx)."""

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[str, int]:
        template = "partials/error.html" if htmx_request.htmx else "error.html"
        status = error.code or 500
        reason = error.description or ""
        if reason == type(error).description:  # werkzeug's own words, not the dashboard's
            reason = translated(reason)
        return render_template(
            template, status=status, title=translated(error.name), reason=reason
        ), status
