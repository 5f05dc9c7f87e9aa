"""The gateway: intake only (validate, persist, answer 202); the one place errors become HTTP."""

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from ..infra import make_store
from ..infra.store import Store
from ..shared import errors
from .requests import MAX_CONTENT_LENGTH
from .routes import routes


def create_app(store: Store | None = None) -> Flask:
    """The gateway around a store (make_store's by default); gunicorn calls it once per process."""
    app = Flask(__name__, static_folder=None)  # an API: no /static/ route
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTENT_LENGTH
    app.register_blueprint(routes(make_store() if store is None else store))
    register_error_handlers(app)
    return app


def register_error_handlers(app: Flask) -> None:
    """Answer each typed error with its status and a JSON body; anything else, a bare JSON 500."""

    @app.errorhandler(errors.InvalidRequestError)
    def invalid_request(e: errors.InvalidRequestError) -> tuple[Response, int]:
        facts = {"field": e.field} if e.field else {}
        return jsonify(error=e.code, message=str(e), **facts), 400

    @app.errorhandler(errors.SessionNotFoundError)
    def session_not_found(e: errors.SessionNotFoundError) -> tuple[Response, int]:
        return jsonify(error="session_not_found", message=str(e), sessionId=e.session_id), 404

    @app.errorhandler(errors.RunNotFoundError)
    def run_not_found(e: errors.RunNotFoundError) -> tuple[Response, int]:
        return jsonify(error="run_not_found", message=str(e), runId=e.run_id), 404

    @app.errorhandler(errors.IdempotencyConflictError)
    def idempotency_conflict(e: errors.IdempotencyConflictError) -> tuple[Response, int]:
        # 409, not a silent replay: the client reused an id for a different message.
        return jsonify(error="idempotency_conflict", message=str(e), runId=e.run_id), 409

    @app.errorhandler(errors.StoreUnavailableError)
    def store_unavailable(e: errors.StoreUnavailableError) -> tuple[Response, int, dict[str, str]]:
        # The client learns the class of the problem; the log keeps which server and why.
        app.logger.warning("store unavailable: %s", e.reason)
        message = f"the store cannot serve requests right now ({e.kind})"
        answer = jsonify(error="store_unavailable", message=message, reason=e.kind)
        return answer, 503, {"Retry-After": "1"}

    @app.errorhandler(HTTPException)  # 404, 405, 413, 415: Werkzeug's own, answered in JSON
    def http_exception(e: HTTPException) -> tuple[Response, int, dict[str, str]]:
        code = (e.name or "error").lower().replace(" ", "_")
        headers = {k: v for k, v in e.get_headers() if k != "Content-Type"}  # 405's Allow stays
        return jsonify(error=code, message=e.description or code), e.code or 500, headers

    @app.errorhandler(Exception)
    def unexpected(e: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error", exc_info=e)
        return jsonify(error="internal_error", message="the gateway failed unexpectedly"), 500
