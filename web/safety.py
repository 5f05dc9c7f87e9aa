"""Refusing foreign hosts and cross-site writes; bad input becomes a visible error, never a 500."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, abort, render_template, request
from htmx_flask import request as htmx_request  # type: ignore[import-untyped]
from werkzeug.exceptions import HTTPException

from labs.term.i18n import N_

from .hosts import refuse_foreign_host
from .i18n import _, translated

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# What a browser says about a request the page itself made, or one the user typed.
SAME_SITE = frozenset({"same-origin", "none"})


class FormError(Exception):
    """A form field is missing or wrong; the message names the field.

    status is the HTTP status of the answer: 400, or 404 when the field names
    something (a run) that no longer exists.
    """

    def __init__(self, field: str, message: str, *, status: int = 400) -> None:
        self.field = field
        self.message = message
        self.status = status
        super().__init__(f"{field}: {message}")


def refuse_cross_site() -> None:
    """Abort a state-changing request that another site's page sent.

    Browsers mark every request with Sec-Fetch-Site and send Origin on POSTs;
    either one naming another site is enough to refuse. A request with neither
    is refused too: no browser the dashboard supports sends a POST without
    them, and a client that hides where it comes from cannot be told apart from
    a page of another site.
    """
    if request.method in SAFE_METHODS:
        return
    fetch_site = request.headers.get("Sec-Fetch-Site")
    origin = request.headers.get("Origin")
    if not fetch_site and not origin:
        abort(
            403,
            _(
                "refused a request that says neither where it comes from (Origin) nor from "
                "which site (Sec-Fetch-Site): changes must come from this dashboard"
            ),
        )
    if fetch_site and fetch_site not in SAME_SITE:
        abort(
            403,
            _(
                "refused a %(site)s request: changes must come from this dashboard",
                site=fetch_site,
            ),
        )
    if origin and urlsplit(origin)[:2] != (request.scheme, request.host):  # scheme://host:port
        abort(
            403,
            _(
                "refused a request from %(origin)s: changes must come from this dashboard",
                origin=origin,
            ),
        )


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


def register_safety(app: Flask) -> None:
    """Install the Host and origin checks and the error pages."""
    # The Host check comes first: an Origin only means something once the host is ours.
    app.before_request(refuse_foreign_host)
    app.before_request(refuse_cross_site)

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
