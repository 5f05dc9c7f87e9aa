"""The gateway's OpenAPI description, served at GET /openapi.json.

The document is openapi.json beside this file, kept by hand. Tests check that
it describes every route the app registers and that its limits are the ones
requests.py enforces, so it cannot silently fall behind the code.
"""

from __future__ import annotations

import json
from pathlib import Path

from flask import Blueprint, Response, jsonify

DOCUMENT = Path(__file__).with_name("openapi.json")


def openapi_document() -> dict[str, object]:
    """The OpenAPI document, read from openapi.json."""
    document: dict[str, object] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return document


def openapi_blueprint() -> Blueprint:
    """GET /openapi.json: the description, for clients and fuzzers."""
    bp = Blueprint("openapi", __name__)
    document = openapi_document()

    @bp.get("/openapi.json")
    def openapi() -> Response:
        """Serve the OpenAPI document."""
        return jsonify(document)

    return bp
