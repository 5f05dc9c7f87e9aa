"""The `mode` fixture: each sandbox mode this process can grade in itself, for the tests of
the sandbox and of grading (loaded for every folder by tests/conftest.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from labs.sandbox.limits import SandboxMode
from labs.sandbox.modes import allow_unsafe, machine_isolation
from tests.support.modes import ALL_MODES, ROOT, Mode, hidden_bwrap, offered

IN_PROCESS_MODES = [m for m in ALL_MODES if m.root == ROOT and not offered(m)]


@pytest.fixture(params=IN_PROCESS_MODES, ids=[m.name for m in IN_PROCESS_MODES])
def mode(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Mode]:
    """Each mode this process can grade in itself: bwrap on PATH, or hidden from it.

    (The modes of another user are run as that user: see tests/support/modes.py.)
    A machine with no isolation at all is graded here with --unsafe-no-sandbox.
    """
    chosen: Mode = request.param
    with contextlib.ExitStack() as stack:
        if not chosen.bwrap:
            path = stack.enter_context(hidden_bwrap(tmp_path_factory.mktemp("no-bwrap")))
            monkeypatch.setenv("PATH", path)
        if machine_isolation().mode == SandboxMode.NONE:
            allow_unsafe(True)
            stack.callback(allow_unsafe, False)
        yield chosen
