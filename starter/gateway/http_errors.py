"""The one place where the lab's errors become HTTP answers."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from werkzeug.exceptions import HTTPException

from ..shared.errors import (
    IdempotencyConflictError,
    InvalidRequestError,
    InvalidValueError,
    RunNotFoundError,
    SessionNotFoundError,
    StoreUnavailableError,
    UnsupportedMediaTypeError,
)


def error_response(status: int, code: str, message: str, **facts: str) -> Response:
    """Build a JSON error body: a machine code, a sentence, and any facts."""
    response = jsonify({"error": code, "message": message, **facts})
    response.status_code = status
    return response


def register_error_handlers(app: Flask) -> None:
    """Map each typed error to its status; anything else is a JSON 500, never a page."""

    @app.errorhandler(InvalidRequestError)
    def invalid_request(error: InvalidRequestError) -> Response:
        facts = {"field": error.field} if error.field else {}
        return error_response(400, error.code, str(error), **facts)

    @app.errorhandler(UnsupportedMediaTypeError)
    def unsupported_media_type(error: UnsupportedMediaTypeError) -> Response:
        return error_response(415, "unsupported_media_type", str(error))

    @app.errorhandler(InvalidValueError)
    def invalid_value(error: InvalidValueError) -> Response:
        return error_response(400, "invalid_value", str(error))

    @app.errorhandler(SessionNotFoundError)
    def session_not_found(error: SessionNotFoundError) -> Response:
        return error_response(404, "session_not_found", str(error), sessionId=error.session_id)

    @app.errorhandler(RunNotFoundError)
    def run_not_found(error: RunNotFoundError) -> Response:
        return error_response(404, "run_not_found", str(error), runId=error.run_id)

    @app.errorhandler(IdempotencyConflictError)
    def idempotency_conflict(error: IdempotencyConflictError) -> Response:
        # 409, not a silent replay: the client reused an id for a different message.
        return error_response(409, "idempotency_conflict", str(error), runId=error.run_id)

    @app.errorhandler(StoreUnavailableError)
    def store_unavailable(error: StoreUnavailableError) -> Response:
        # The client learns the class of the problem; the log keeps which server and why.
        app.logger.warning("store unavailable: %s", error.reason)
        message = f"the store cannot serve requests right now ({error.kind})"
        response = error_response(503, "store_unavailable", message, reason=error.kind)
        response.headers["Retry-After"] = "1"
        return response

    @app.errorhandler(HTTPException)
    def http_exception(error: HTTPException) -> Response:
        status = error.code or 500
        code = (error.name or "error").lower().replace(" ", "_")
        return error_response(status, code, error.description or code)

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> Response:
        app.logger.exception("unexpected error", exc_info=error)
        return error_response(500, "internal_error", "the gateway failed unexpectedly")
