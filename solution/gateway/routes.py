"""The gateway's endpoints: create sessions, accept chat messages, report runs."""

from __future__ import annotations

import json

from flask import Blueprint, Response, current_app, jsonify, request

from ..infra.store import Store
from ..shared.errors import IdempotencyConflictError, StoreUnavailableError
from ..shared.keys import idempotency_key_for
from ..shared.schema import Run
from .requests import MAX_ID_CHARS, parse_chat, parse_new_session, storable_text


def run_json(run: Run) -> dict[str, object]:
    """The public view of a run."""
    return {
        "runId": run.id,
        "sessionId": run.session_id,
        "status": str(run.status),
        "error": run.error,
        "createdAt": run.created_at.isoformat(),
        "updatedAt": run.updated_at.isoformat(),
    }


def intake_blueprint(store: Store) -> Blueprint:
    """POST /sessions, POST /chat and GET /runs/<id>."""
    bp = Blueprint("intake", __name__)

    @bp.post("/sessions")
    def create_session() -> tuple[Response, int]:
        """Open a conversation and answer with its id."""
        body = parse_new_session(request)
        session = store.create_session(body.user_id, body.title)
        return jsonify({"sessionId": session.id}), 201

    @bp.post("/chat")
    def chat() -> Response:
        """Persist a pending run for the message and answer at once.

        202, not 200: the run is accepted, not finished; a worker does the slow
        part. A retry with the same key gets the same run, marked as a replay.
        """
        body = parse_chat(request)
        key = idempotency_key_for(body.session_id, body.client_message_id, body.message)
        outcome = store.create_run(body.session_id, body.message, key)
        run = outcome.run
        if not outcome.created and run.input != body.message:
            raise IdempotencyConflictError(body.client_message_id or key, run.id)
        # Every request pays for this answer, so it is built directly: the body by
        # json.dumps, the headers in one list, the Location from its fixed pattern.
        answer = json.dumps({"runId": run.id, "status": run.status.value})
        headers = [
            ("Location", f"{request.script_root}/runs/{run.id}"),
            ("Idempotent-Replayed", "false" if outcome.created else "true"),
        ]
        return Response(answer, 202, headers, mimetype="application/json")

    @bp.get("/runs/<run_id>")
    def get_run(run_id: str) -> Response:
        """Report a run's status."""
        return jsonify(run_json(store.get_run(storable_text(run_id, "runId", MAX_ID_CHARS))))

    return bp


def probes_blueprint(store: Store) -> Blueprint:
    """Liveness and readiness, which differ exactly when the database is down."""
    bp = Blueprint("probes", __name__)

    @bp.get("/healthz")
    def healthz() -> Response:
        """Liveness: the process is up. Never asks the database."""
        return jsonify({"status": "ok"})

    @bp.get("/readyz")
    def readyz() -> tuple[Response, int]:
        """Readiness: traffic may be sent here now, because the store answers."""
        try:
            store.ping()
        except StoreUnavailableError as error:
            # The details (host, port, user, the driver's words) go to the log, not
            # to whoever asked: the answer names only the class of the problem.
            current_app.logger.warning("not ready: %s", error.reason)
            return jsonify({"status": "unavailable", "reason": error.kind}), 503
        return jsonify({"status": "ready"}), 200

    return bp
