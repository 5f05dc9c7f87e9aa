"""Refusing state-changing requests that another site's page sent."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import abort, request

from ..i18n import _

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# What a browser says about a request the page itself made, or one the user typed.
SAME_SITE = frozenset({"same-origin", "none"})


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
                "refused a {site} request: changes must come from this dashboard",
                site=fetch_site,
            ),
        )
    if origin and urlsplit(origin)[:2] != (request.scheme, request.host):  # scheme://host:port
        abort(
            403,
            _(
                "refused a request from {origin}: changes must come from this dashboard",
                origin=origin,
            ),
        )
