"""Refusing foreign hosts and cross-site writes; bad input becomes a visible error, never a 500."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, abort, render_template, request
from htmx_flask import request as htmx_request  # type: ignore[import-untyped]
from werkzeug.exceptions import HTTPException

from labs.i18n import N_

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
    either one naming another site is enough to refuse.
    """
    if request.method in SAFE_METHODS:
        return
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site and fetch_site not in SAME_SITE:
        abort(
            403,
            _(
                "refused a %(site)s request: changes must come from this dashboard",
                site=fetch_site,
            ),
        )
    origin = request.headers.get("Origin")
    if origin and urlsplit(origin).netloc != request.host:
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


def register_safety(app: Flask) -> None:
    """Install the Host and origin checks and the error pages."""
    # The Host check comes first: an Origin only means something once the host is ours.
    app.before_request(refuse_foreign_host)
    app.before_request(refuse_cross_site)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> tuple[str, int]:
        template = "partials/error.html" if htmx_request.htmx else "error.html"
        status = error.code or 500
        return render_template(
            template, status=status, title=translated(error.name), reason=error.description or ""
        ), status
