"""Reading request bodies into typed values, or a 4xx that names the field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO

from flask import Request
from werkzeug.exceptions import RequestEntityTooLarge

from ..shared.errors import InvalidRequestError, UnsupportedMediaTypeError

# Bodies above this many bytes are refused with 413, however they are sent.
MAX_BODY_BYTES = 64 * 1024
MAX_ID_CHARS = 128
# Arrays and objects inside one another: the bodies here are flat, and a parser
# that recurses must not be handed thirty thousand levels.
MAX_DEPTH = 32
QUOTE, BACKSLASH = ord('"'), ord("\\")


@dataclass(frozen=True)
class ChatRequest:
    """A validated POST /chat body."""

    session_id: str
    message: str
    client_message_id: str | None


@dataclass(frozen=True)
class NewSessionRequest:
    """A validated POST /sessions body."""

    user_id: str
    title: str


def json_object(request: Request) -> dict[str, object]:
    """Return the body as a JSON object, or raise the error that says why it is not one."""
    if not request.is_json:
        raise UnsupportedMediaTypeError("send the body as application/json")
    raw = read_body(request)
    if nests_too_deeply(raw):
        raise InvalidRequestError(
            "too_deep", f"the body nests arrays and objects more than {MAX_DEPTH} levels deep"
        )
    try:
        body: object = json.loads(raw)
    except ValueError:  # bad JSON, or bytes that are not UTF-8
        raise InvalidRequestError("malformed_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise InvalidRequestError("malformed_json", "the body must be a JSON object")
    return {str(key): value for key, value in body.items()}


def read_body(request: Request) -> bytes:
    """Return the whole body, or raise RequestEntityTooLarge (413) if it is over the limit.

    A declared Content-Length over the limit is refused unread. A chunked body
    declares no length, and cutting it at the limit would parse half a request,
    so at most one byte more than the limit is read: if that byte exists, the
    body is too large.
    """
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise RequestEntityTooLarge()
    environ = request.environ
    # Servers that end the stream themselves (gunicorn, and werkzeug for chunked
    # bodies) say so; Flask's own stream would stop quietly at the limit.
    stream: IO[bytes] = (
        environ["wsgi.input"] if environ.get("wsgi.input_terminated") else request.stream
    )
    parts: list[bytes] = []
    size = 0
    while size <= MAX_BODY_BYTES:
        part = stream.read(MAX_BODY_BYTES + 1 - size)  # may return less: read until empty
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > MAX_BODY_BYTES:
        raise RequestEntityTooLarge()
    return b"".join(parts)


def nests_too_deeply(raw: bytes) -> bool:
    """Whether arrays and objects nest more than MAX_DEPTH levels deep in raw JSON."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False  # too few brackets to be that deep: the common case costs two counts
    depth, in_string, escaped = 0, False, False
    for byte in raw:  # one pass, no recursion; brackets inside strings do not count
        if escaped:  # the byte after a backslash in a string is never special
            escaped = False
        elif in_string:
            escaped = byte == BACKSLASH
            in_string = byte != QUOTE
        elif byte == QUOTE:
            in_string = True
        elif byte in b"[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif byte in b"]}":
            depth -= 1
    return False


def optional_text(body: dict[str, object], name: str, max_chars: int) -> str | None:
    """Return body[name] as non-blank text, or None when it is absent or null."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequestError("invalid_field", f"{name} must be a string", name)
    if not value.strip():
        raise InvalidRequestError("invalid_field", f"{name} must not be blank", name)
    return storable_text(value, name, max_chars)


def storable_text(value: str, name: str, max_chars: int) -> str:
    """Return value if Postgres can store it as text of at most max_chars characters."""
    if len(value) > max_chars:
        raise InvalidRequestError(
            "invalid_field", f"{name} is longer than {max_chars} characters", name
        )
    if "\x00" in value or not _is_encodable(value):
        raise InvalidRequestError(
            "invalid_field", f"{name} must be valid text without NUL characters", name
        )
    return value


def required_text(body: dict[str, object], name: str, max_chars: int) -> str:
    """Return body[name] as non-blank text, or raise InvalidRequestError naming it."""
    value = optional_text(body, name, max_chars)
    if value is None:
        raise InvalidRequestError("missing_field", f"{name} is required", name)
    return value


def _is_encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate such as "\ud800"
        return False
    return True


def parse_chat(request: Request) -> ChatRequest:
    """Validate a POST /chat body."""
    body = json_object(request)
    return ChatRequest(
        session_id=required_text(body, "sessionId", MAX_ID_CHARS),
        message=required_text(body, "message", MAX_BODY_BYTES),
        client_message_id=optional_text(body, "clientMessageId", MAX_ID_CHARS),
    )


def parse_new_session(request: Request) -> NewSessionRequest:
    """Validate a POST /sessions body."""
    body = json_object(request)
    return NewSessionRequest(
        user_id=required_text(body, "userId", MAX_ID_CHARS),
        title=optional_text(body, "title", 200) or "New chat",
    )
