"""The gateway: intake only. Validate, persist, answer 202; never run the agent."""

from flask import Flask

from ..infra import Store, make_store
from .http_errors import register_error_handlers
from .requests import MAX_CONTENT_LENGTH
from .routes import routes


def create_app(store: Store | None = None) -> Flask:
    """Build the gateway around a store (by default make_store's), keeping no state of its own.

    Under gunicorn each process calls this once, so processes share only the database.
    """
    app = Flask(__name__, static_folder=None)  # an API: no /static/ route
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTENT_LENGTH
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.register_blueprint(routes(make_store() if store is None else store))
    register_error_handlers(app)
    return app
