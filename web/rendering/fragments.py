"""One context, two renderings: the full page, or its fragment alone for htmx."""

from __future__ import annotations

from typing import Any

import htmx_flask  # type: ignore[import-untyped]
from flask import Response, render_template


def wants_fragment() -> bool:
    """Whether this request is htmx's own (not a boosted navigation): it gets the fragment."""
    return bool(htmx_flask.request.htmx) and not htmx_flask.request.htmx.boosted


def render_view(
    page: str,
    fragment: str,
    context: dict[str, Any],
    status: int = 200,
    *,
    reswap: str | None = None,
) -> Response:
    """Render page for a browser navigation, fragment for an htmx request.

    The page includes the fragment, so both see exactly the same context.
    """
    body = render_template(fragment if wants_fragment() else page, **context)
    response: Response = htmx_flask.make_response(body, status)
    if reswap:
        # Set by hand: htmx-flask 0.1.0 lists "beforebegin" "afterbegin" without a comma,
        # so make_response(reswap="afterbegin") raises ValueError.
        response.headers["HX-Reswap"] = reswap
    return response
