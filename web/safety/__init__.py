"""Keeping the dashboard safe to open: foreign hosts and cross-site writes refused, bad input
shown as a visible error (never a 500), one heavy job of each kind at a time.

hosts.py        the Host header: only loopback names, and those configured on purpose
cross_site.py   state-changing requests from another site's page
error_pages.py  the error page, in the page's language
forms.py        reading form fields; FormError names the field that is wrong
jobs.py         one race and one check run at a time: a second one is told it is busy
"""

from __future__ import annotations

from flask import Flask

from .cross_site import refuse_cross_site
from .error_pages import register_error_pages
from .hosts import refuse_foreign_host

__all__ = ["register_safety"]


def register_safety(app: Flask) -> None:
    """Install the Host and origin checks and the error pages."""
    # The Host check comes first: an Origin only means something once the host is ours.
    app.before_request(refuse_foreign_host)
    app.before_request(refuse_cross_site)
    register_error_pages(app)
