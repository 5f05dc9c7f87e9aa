"""Part (c0): the floor of the HTTP layer, gunicorn serving an app that does nothing.

The same server, worker class and settings as part (c), in front of a WSGI
app that reads the body and answers 202 without Flask and without the store.
Whatever (c0) reaches, no gateway on this server can beat: the gap between
(c0) and (c) is what Flask, the request parsing and the store add.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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
