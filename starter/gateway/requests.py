"""Reading request bodies into typed values, or a 4xx that names the field."""

from __future__ import annotations

from dataclasses import dataclass

from flask import Request

from ..shared.errors import InvalidRequestError, UnsupportedMediaTypeError

# Bodies above this many bytes are refused with 413 before they are parsed.
MAX_BODY_BYTES = 64 * 1024
MAX_ID_CHARS = 128


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
    body: object = request.get_json(silent=True)
    if body is None:
        raise InvalidRequestError("malformed_json", "the body is not valid JSON")
    if not isinstance(body, dict):
        raise InvalidRequestError("malformed_json", "the body must be a JSON object")
    return {str(key): value for key, value in body.items()}


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
