"""The gateway's OpenAPI description, kept by hand in openapi.json beside this file.

The trees do not serve it (it is not the lesson); the fuzz tests draw their paths
from it, and tests check that it describes exactly the routes a tree's gateway
registers and the limits it enforces, so it cannot fall behind the code unseen.
"""

from __future__ import annotations

import json
from pathlib import Path

DOCUMENT = Path(__file__).with_name("openapi.json")


def openapi_document() -> dict[str, object]:
    """The OpenAPI document, read from openapi.json."""
    document: dict[str, object] = json.loads(DOCUMENT.read_text(encoding="utf-8"))
    return document


def described_paths() -> list[str]:
    """The paths the document describes, such as "/runs/{run_id}"."""
    paths = openapi_document()["paths"]
    return [str(path) for path in paths] if isinstance(paths, dict) else []
