"""The gateway's Flask application factory."""

from __future__ import annotations

from flask import Flask

from ..infra.store import Store
from .http_errors import register_error_handlers
from .openapi import openapi_blueprint
from .requests import MAX_BODY_BYTES
from .routes import intake_blueprint, probes_blueprint


def create_app(store: Store) -> Flask:
    """Build the gateway around a store; the app keeps no state of its own."""
    app = Flask(__name__, static_folder=None)  # an API: no /static/ route to describe or guard
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.register_blueprint(intake_blueprint(store))
    app.register_blueprint(probes_blueprint(store))
    app.register_blueprint(openapi_blueprint())
    register_error_handlers(app)
    return app
