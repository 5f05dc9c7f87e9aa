"""The sandbox's errors."""

from __future__ import annotations


class SandboxError(Exception):
    """A sandbox could not be set up or cleaned up: no free slot, or processes that survived."""


class NoIsolationError(SandboxError):
    """This machine gives no isolation and --unsafe-no-sandbox was not given; says what to do."""
