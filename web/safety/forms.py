"""Reading form fields, with a FormError naming the field when one is wrong."""

from __future__ import annotations

from collections.abc import Sequence

from flask import request

from ..i18n import _


class FormError(Exception):
    """A form field is missing or wrong; the message names the field.

    status is the HTTP status of the answer: 400, or 404 when the field names
    something (a run) that no longer exists.
    """

    def __init__(self, field: str, message: str, *, status: int = 400) -> None:
        self.field = field
        self.message = message
        self.status = status
        super().__init__(f"{field}: {message}")


def text(name: str, *, required: bool = True, limit: int = 500) -> str:
    """A trimmed text field, at most limit characters."""
    value = request.form.get(name, "").strip()
    if required and not value:
        raise FormError(name, _("{name} is required", name=name))
    if len(value) > limit:
        raise FormError(
            name,
            _(
                "{name} is {length} characters; at most {limit}",
                name=name,
                length=len(value),
                limit=limit,
            ),
        )
    return value


def number(name: str, low: int, high: int) -> int:
    """A whole number between low and high inclusive."""
    raw = request.form.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        raise FormError(
            name, _("{name} must be a whole number, not {raw}", name=name, raw=repr(raw))
        ) from None
    if not low <= value <= high:
        raise FormError(
            name,
            _(
                "{name} must be between {low} and {high}, not {value}",
                name=name,
                low=low,
                high=high,
                value=value,
            ),
        )
    return value


def choice(name: str, choices: Sequence[str]) -> str:
    """One of the given choices."""
    value = request.form.get(name, "")
    if value not in choices:
        raise FormError(
            name,
            _(
                "{name} must be one of {choices}, not {value}",
                name=name,
                choices=", ".join(choices),
                value=repr(value),
            ),
        )
    return value


def flag(name: str) -> bool:
    """A checkbox: present means on."""
    return request.form.get(name) in ("on", "1", "true", "yes")
