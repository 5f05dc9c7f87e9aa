"""The gateway's endpoints: sessions, chat messages, runs, two probes and the API document."""

from flask import Blueprint, Response, current_app, jsonify, request, send_file, url_for

from ..infra.store import Store
from ..shared import errors
from ..shared.keys import idempotency_key_for
from .requests import MAX_BODY_BYTES, json_object, optional_text, required_text, storable_text


def routes(store: Store) -> Blueprint:
    """POST /sessions, POST /chat, and GET /runs/<id>, /healthz, /readyz and /openapi.json."""
    bp = Blueprint("gateway", __name__)

    @bp.post("/sessions")
    def create_session() -> tuple[Response, int]:
        """Open a conversation and answer with its id."""
        body = json_object(request)
        user_id = required_text(body, "userId")
        title = optional_text(body, "title", max_chars=200) or "New chat"
        session = store.create_session(user_id, title)
        return jsonify({"sessionId": session.id}), 201

    @bp.post("/chat")
    def chat() -> tuple[Response, int, dict[str, str]]:
        """Persist a pending run and answer at once: 202, not 200, for the run is accepted, not
        finished (a worker does the slow part). A retry with the same key gets the same run."""
        body = json_object(request)
        session_id = required_text(body, "sessionId")
        message = required_text(body, "message", max_chars=MAX_BODY_BYTES)
        client_message_id = optional_text(body, "clientMessageId")
        key = idempotency_key_for(session_id, client_message_id, message)
        outcome = store.create_run(session_id, message, key)
        run = outcome.run
        if not outcome.created and run.input != message:
            raise errors.IdempotencyConflictError(client_message_id or key, run.id)
        headers = {
            "Location": url_for("gateway.get_run", run_id=run.id),
            "Idempotent-Replayed": "false" if outcome.created else "true",
        }
        return jsonify({"runId": run.id, "status": run.status}), 202, headers

    @bp.get("/runs/<run_id>")
    def get_run(run_id: str) -> Response:
        """Report a run's status."""
        run = store.get_run(storable_text(run_id, "runId"))
        return jsonify(
            runId=run.id,
            sessionId=run.session_id,
            status=run.status,
            error=run.error,
            createdAt=run.created_at.isoformat(),
            updatedAt=run.updated_at.isoformat(),
        )

    @bp.get("/healthz")
    def healthz() -> Response:
        """Liveness: the process is up. Never asks the database."""
        return jsonify(status="ok")

    @bp.get("/readyz")
    def readyz() -> tuple[Response, int]:
        """Readiness: traffic may be sent here now, because the store answers."""
        try:
            store.ping()
        except errors.StoreUnavailableError as error:
            current_app.logger.warning("not ready: %s", error.reason)
            return jsonify(status="unavailable", reason=error.kind), 503
        return jsonify(status="ready"), 200

    # What each route takes and answers (OpenAPI 3.0): openapi.json, beside this module.
    bp.add_url_rule("/openapi.json", "openapi", lambda: send_file("openapi.json"))

    return bp
