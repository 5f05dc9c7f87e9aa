"""The gateway: intake only. Validate, persist, answer 202; never run the agent."""

from .app import create_app

__all__ = ["create_app"]
