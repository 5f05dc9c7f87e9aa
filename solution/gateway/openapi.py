"""The gateway's OpenAPI description, served at GET /openapi.json.

Kept by hand and small; a test checks that every route the app registers is
described here, so the description cannot silently fall behind the code.
"""

from __future__ import annotations

from collections.abc import Mapping

from flask import Blueprint, Response, jsonify

from .requests import MAX_BODY_BYTES, MAX_ID_CHARS

ID_TEXT: dict[str, object] = {"type": "string", "minLength": 1, "maxLength": MAX_ID_CHARS}
ERROR: dict[str, object] = {"$ref": "#/components/schemas/Error"}


def _json(schema: Mapping[str, object]) -> dict[str, object]:
    return {"application/json": {"schema": schema}}


def _answer(description: str, schema: Mapping[str, object] = ERROR) -> dict[str, object]:
    return {"description": description, "content": _json(schema)}


Responses = dict[str, dict[str, object]]
BAD_INPUT: Responses = {
    "400": _answer("A field is missing or malformed; `field` names it."),
    "413": _answer(f"The body is larger than {MAX_BODY_BYTES} bytes."),
    "415": _answer("The body is not sent as application/json."),
}
UNAVAILABLE: Responses = {
    "503": _answer("The database cannot be reached; retry after Retry-After."),
}


def _merge(*groups: Responses) -> Responses:
    return {status: answer for group in groups for status, answer in group.items()}


STATUS: dict[str, object] = {"type": "object", "properties": {"status": {"type": "string"}}}

OPENAPI: dict[str, object] = {
    "openapi": "3.0.3",
    "info": {
        "title": "mini-koda gateway",
        "version": "1",
        "description": "Intake only: validate, persist a pending run, answer 202.",
    },
    "paths": {
        "/sessions": {
            "post": {
                "summary": "Open a conversation.",
                "requestBody": {
                    "required": True,
                    "content": _json({"$ref": "#/components/schemas/NewSession"}),
                },
                "responses": {
                    "201": _answer(
                        "The session was created.",
                        {
                            "type": "object",
                            "required": ["sessionId"],
                            "properties": {"sessionId": {"type": "string"}},
                        },
                    ),
                    **BAD_INPUT,
                    **UNAVAILABLE,
                },
            }
        },
        "/chat": {
            "post": {
                "summary": "Accept a message: persist a pending run and answer at once.",
                "requestBody": {
                    "required": True,
                    "content": _json({"$ref": "#/components/schemas/Chat"}),
                },
                "responses": {
                    "202": _answer(
                        "Accepted (or replayed: header Idempotent-Replayed: true).",
                        {
                            "type": "object",
                            "required": ["runId", "status"],
                            "properties": {
                                "runId": {"type": "string"},
                                "status": {"type": "string"},
                            },
                        },
                    ),
                    **BAD_INPUT,
                    "404": _answer("The session does not exist."),
                    "409": _answer("clientMessageId was already used with another message."),
                    **UNAVAILABLE,
                },
            }
        },
        "/runs/{run_id}": {
            "get": {
                "summary": "Report a run's status.",
                "parameters": [
                    {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": _merge(
                    {
                        "200": _answer("The run.", {"$ref": "#/components/schemas/Run"}),
                        "404": _answer("No run has this id."),
                    },
                    UNAVAILABLE,
                ),
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness: the process is up; never asks the database.",
                "responses": {"200": _answer("Alive.", STATUS)},
            }
        },
        "/readyz": {
            "get": {
                "summary": "Readiness: the database answers.",
                "responses": {
                    "200": _answer("Ready.", STATUS),
                    "503": _answer("Not ready; `reason` says why.", STATUS),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This description.",
                "responses": {"200": _answer("An OpenAPI 3.0 document.", {"type": "object"})},
            }
        },
    },
    "components": {
        "schemas": {
            "NewSession": {
                "type": "object",
                "required": ["userId"],
                "properties": {"userId": ID_TEXT, "title": {"type": "string", "maxLength": 200}},
            },
            "Chat": {
                "type": "object",
                "required": ["sessionId", "message"],
                "properties": {
                    "sessionId": ID_TEXT,
                    "message": {"type": "string", "minLength": 1, "maxLength": MAX_BODY_BYTES},
                    "clientMessageId": ID_TEXT,
                },
            },
            "Run": {
                "type": "object",
                "properties": {
                    **{
                        name: {"type": "string"}
                        for name in ("runId", "sessionId", "status", "createdAt", "updatedAt")
                    },
                    "error": {"type": "string", "nullable": True},
                },
            },
            "Error": {
                "type": "object",
                "required": ["error", "message"],
                "properties": {
                    "error": {"type": "string"},
                    "message": {"type": "string"},
                    "field": {"type": "string"},
                },
            },
        }
    },
}


def openapi_blueprint() -> Blueprint:
    """GET /openapi.json: the description above, for clients and fuzzers."""
    bp = Blueprint("openapi", __name__)

    @bp.get("/openapi.json")
    def openapi() -> Response:
        """Serve the OpenAPI document."""
        return jsonify(OPENAPI)

    return bp
