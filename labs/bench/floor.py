"""Parts (c0) and (c1): the floors under the gateway, on the same gunicorn as part (c).

(c0) is a WSGI app that reads the body and answers 202 without Flask and
without the store: whatever it reaches, no gateway on this server can beat.
(c1) is a Flask route that parses the body and answers 202, still without the
store, which separates what Flask costs from what the store and database add.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from flask import Flask, Response, jsonify, request

ANSWER = b'{"runId": "floor", "status": "pending"}'
StartResponse = Callable[[str, list[tuple[str, str]]], object]


def app(environ: dict[str, object], start_response: StartResponse) -> Iterable[bytes]:
    """Read the request body (as the gateway must), then answer 202 (or 200 on /healthz)."""
    stream = environ["wsgi.input"]
    length = int(str(environ.get("CONTENT_LENGTH") or 0))
    if length:
        stream.read(length)  # type: ignore[attr-defined]
    status = "200 OK" if environ.get("PATH_INFO") == "/healthz" else "202 Accepted"
    start_response(
        status, [("Content-Type", "application/json"), ("Content-Length", str(len(ANSWER)))]
    )
    return [ANSWER]


# Part (c1): the Flask floor, the same server in front of a Flask route that parses the body
# as the gateway does (Werkzeug's limit, json.loads) and answers 202 like it, without a store.
# (c1) - (c0) is what Flask costs; (c) - (c1) what the store, the database and the route add.
flask_app = Flask(__name__)
flask_app.config["MAX_CONTENT_LENGTH"] = 64 * 1024 + 1


@flask_app.post("/chat")
def chat() -> tuple[Response, int, dict[str, str]]:
    """Parse the JSON body and answer 202, storing nothing."""
    json.loads(request.get_data())
    headers = {"Location": "/runs/floor", "Idempotent-Replayed": "false"}
    return jsonify(runId="floor", status="pending"), 202, headers


@flask_app.get("/healthz")
def healthz() -> Response:
    """Liveness, which GatewayServer waits for."""
    return jsonify(status="ok")
