"""The one place where the lab's errors become HTTP answers: JSON, never an HTML page."""

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from ..shared.errors import (
    IdempotencyConflictError,
    InvalidRequestError,
    InvalidValueError,
    RunNotFoundError,
    SessionNotFoundError,
    StoreUnavailableError,
)


def error_body(code: str, message: str, **facts: str) -> Response:
    """A JSON error body: a machine code, a sentence, and any facts."""
    return jsonify(error=code, message=message, **facts)


def register_error_handlers(app: Flask) -> None:
    """Map each typed error to its status; anything else is a JSON 500 without internals."""

    @app.errorhandler(InvalidRequestError)
    def invalid_request(error: InvalidRequestError) -> tuple[Response, int]:
        facts = {"field": error.field} if error.field else {}
        return error_body(error.code, str(error), **facts), 400

    @app.errorhandler(InvalidValueError)
    def invalid_value(error: InvalidValueError) -> tuple[Response, int]:
        return error_body("invalid_value", str(error)), 400

    @app.errorhandler(SessionNotFoundError)
    def session_not_found(error: SessionNotFoundError) -> tuple[Response, int]:
        return error_body("session_not_found", str(error), sessionId=error.session_id), 404

    @app.errorhandler(RunNotFoundError)
    def run_not_found(error: RunNotFoundError) -> tuple[Response, int]:
        return error_body("run_not_found", str(error), runId=error.run_id), 404

    @app.errorhandler(IdempotencyConflictError)
    def idempotency_conflict(error: IdempotencyConflictError) -> tuple[Response, int]:
        # 409, not a silent replay: the client reused an id for a different message.
        return error_body("idempotency_conflict", str(error), runId=error.run_id), 409

    @app.errorhandler(StoreUnavailableError)
    def store_unavailable(error: StoreUnavailableError) -> tuple[Response, int, dict[str, str]]:
        # The client learns the class of the problem; the log keeps which server and why.
        app.logger.warning("store unavailable: %s", error.reason)
        message = f"the store cannot serve requests right now ({error.kind})"
        return (
            error_body("store_unavailable", message, reason=error.kind),
            503,
            {"Retry-After": "1"},
        )

    @app.errorhandler(HTTPException)  # 404, 405, 413, 415: Werkzeug's own, answered in JSON
    def http_exception(error: HTTPException) -> tuple[Response, int]:
        code = (error.name or "error").lower().replace(" ", "_")
        return error_body(code, error.description or code), error.code or 500

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error", exc_info=error)
        return error_body("internal_error", "the gateway failed unexpectedly"), 500
