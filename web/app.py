"""The dashboard's Flask app: its configuration, its views, and the lab they share."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from typing import Any

from flask import Flask, redirect, url_for
from htmx_flask import Htmx  # type: ignore[import-untyped]
from jinja2 import StrictUndefined
from werkzeug.wrappers import Response

from .i18n import register_i18n
from .lab import Lab
from .safety import register_safety
from .safety.hosts import trusted_from_env, trusted_hosts


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the dashboard; test_config overrides the defaults and the environment."""
    app = Flask(__name__)
    app.config.from_mapping(
        DATABASE_URL=os.environ.get("DATABASE_URL") or None,
        # A learner's infinite loop ends here: a check run's hosts are killed after this long.
        CHECK_TIMEOUT=float(os.environ.get("WEB_CHECK_TIMEOUT", "60")),
        # A check still running after this many seconds fails, naming the line it was stuck on,
        # and the checks after it still run.
        CHECK_EACH_TIMEOUT=float(os.environ.get("WEB_CHECK_EACH_TIMEOUT", "10")),
        # The runs view's tree runs in a process of its own: one that does not answer a request
        # within this many seconds (a learner's endless loop) is killed, and started again.
        RUNS_TIMEOUT=float(os.environ.get("WEB_RUNS_TIMEOUT", "5")),
        # Seconds that process may take to import the tree and open its store.
        RUNS_START_TIMEOUT=float(os.environ.get("WEB_RUNS_START_TIMEOUT", "30")),
        # Seconds between two steps of the demo executor: slow enough to watch.
        DEMO_PACE=float(os.environ.get("WEB_DEMO_PACE", "0.8")),
        DEMO_CHUNKS=4,
        # Tree name -> what `python -m labs check --tree` gets (a name or a path).
        # The learners' release has no solution/: its dashboard serves the starter alone.
        TREES={name: name for name in ("starter", "solution") if importlib.util.find_spec(name)},
        # Host names accepted besides the loopback ones (WEB_TRUSTED_HOSTS, --trusted-host).
        EXTRA_TRUSTED_HOSTS=trusted_from_env(os.environ),
    )
    if test_config is not None:
        app.config.from_mapping(test_config)
    app.config["TRUSTED_HOST_NAMES"] = trusted_hosts(app.config["EXTRA_TRUSTED_HOSTS"])
    if app.testing:
        # A partial rendered without a variable it needs fails the test, not the learner.
        app.jinja_env.undefined = StrictUndefined
    Htmx(app)
    register_i18n(app)
    lab = Lab(app.config)
    app.extensions["mini_koda_lab"] = lab
    register_safety(app)
    _register_views(app)

    @app.after_request
    def never_stale(response: Response) -> Response:
        """Pages show live state: Back or a reload asks again, never shows a stale copy."""
        if response.mimetype == "text/html":
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.get("/")
    def index() -> Response:
        """The checks are where a learner starts."""
        return redirect(url_for("checks.page"))

    return app


def _register_views(app: Flask) -> None:
    from .views import checks, database, race, review, run_actions, run_detail, runs

    for module in (checks, runs, run_actions, run_detail, database, race, review):
        app.register_blueprint(module.bp)
    # The diff shows the solution: the learners' release leaves this view out.
    app.config["DIFF_VIEW"] = bool(
        importlib.util.find_spec("web.views.diff") and "solution" in app.config["TREES"]
    )
    if app.config["DIFF_VIEW"]:
        from .views import diff

        app.register_blueprint(diff.bp)
