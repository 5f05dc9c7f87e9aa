"""Fixtures for the command tests: the lab's language put back after a test chose one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from labs.term import i18n


@pytest.fixture
def speak(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Let a test choose the lab's language (i18n.use, --lang); English again afterwards,
    LAB_LANG restored."""
    monkeypatch.setenv("LAB_LANG", i18n.ENGLISH)
    yield
    i18n.use(i18n.ENGLISH)
