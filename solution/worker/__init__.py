"""The worker side. Today it only reads; executing runs is the next day's job."""

from .queries import pending_runs

__all__ = ["pending_runs"]
