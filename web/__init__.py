"""The lab bench: a Flask + htmx dashboard that runs the checks and shows runs moving.

create_app (web/app.py) is imported when first asked for: the dashboard's check
process (web/check_child.py) lives in this package too, and starts faster
without Flask and the views, which it never uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module 'web' has no attribute {name!r}")
