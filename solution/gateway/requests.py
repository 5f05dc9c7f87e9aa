"""Reading a request's JSON body and its fields, or raising the 4xx that says what is wrong."""

import json
import re

from flask import Request
from werkzeug.exceptions import RequestEntityTooLarge, UnsupportedMediaType

from ..shared import errors

# Bodies above this many bytes are refused with 413, however they are sent.
MAX_BODY_BYTES = 64 * 1024
# Werkzeug stops reading a chunked body at MAX_CONTENT_LENGTH: one byte over tells one too big.
MAX_CONTENT_LENGTH = MAX_BODY_BYTES + 1
MAX_ID_CHARS = 128
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_object(request: Request) -> dict[str, object]:
    """Return the body as a JSON object, or raise the error that says why it is not one."""
    if not request.is_json:
        raise UnsupportedMediaType("send the body as application/json")
    raw = request.get_data()
    if len(raw) > MAX_BODY_BYTES:
        raise RequestEntityTooLarge()
    try:
        body: object = json.loads(raw)
    except RecursionError:  # thousands of [ or {: more than the parser has stack for
        raise errors.InvalidRequestError("too_deep", "the body nests too deeply") from None
    except ValueError:  # bad JSON, or bytes that are not UTF-8
        raise errors.InvalidRequestError("malformed_json", "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise errors.InvalidRequestError("malformed_json", "the body must be a JSON object")
    return body


def optional_text(body: dict[str, object], name: str, max_chars: int = MAX_ID_CHARS) -> str | None:
    """Return body[name] as non-blank text (an id unless max_chars says otherwise), or None."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise errors.InvalidRequestError("invalid_field", f"{name} must be a string", name)
    if not value.strip():
        raise errors.InvalidRequestError("invalid_field", f"{name} must not be blank", name)
    return storable_text(value, name, max_chars)


def required_text(body: dict[str, object], name: str, max_chars: int = MAX_ID_CHARS) -> str:
    """Return body[name] as non-blank text, or raise InvalidRequestError naming it."""
    value = optional_text(body, name, max_chars)
    if value is None:
        raise errors.InvalidRequestError("missing_field", f"{name} is required", name)
    return value


def storable_text(value: str, name: str, max_chars: int = MAX_ID_CHARS) -> str:
    """Return value if Postgres can store it: at most max_chars, no NUL, no lone surrogate."""
    if len(value) > max_chars:
        message = f"{name} is longer than {max_chars} characters"
        raise errors.InvalidRequestError("invalid_field", message, name)
    if "\x00" in value or LONE_SURROGATE.search(value):
        message = f"{name} must be valid text without NUL characters"
        raise errors.InvalidRequestError("invalid_field", message, name)
    return value
