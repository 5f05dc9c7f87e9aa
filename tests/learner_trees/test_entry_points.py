"""python -m <tree> and python -m <tree>.worker: clear words, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from labs.trees.finding import REPO_ROOT


def run_module(module: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run python -m module from the repository root with a controlled environment."""
    environ = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DATABASE_URL")}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO_ROOT,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_the_worker_reports_an_unreachable_database_in_one_line(tree: str) -> None:
    """A database that does not answer is a sentence on stderr and exit 1, not a traceback."""
    result = run_module(
        f"{tree}.worker", "--once", DATABASE_URL="postgresql://koda@127.0.0.1:9/koda"
    )
    assert result.returncode == 1
    assert result.stderr.startswith("store unavailable: cannot reach the database at 127.0.0.1:9")
    assert "Traceback" not in result.stderr


def test_the_worker_under_mock_says_it_sees_only_its_own_memory() -> None:
    """A separate process has its own MemoryStore; the worker says so instead of puzzling."""
    result = run_module("solution.worker", "--once", MOCK="1")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "MOCK=1: this worker sees only its own in-memory store (see MOCK.md)",
        "0 pending run(s)",
    ]


@pytest.mark.parametrize("port", ["abc", "0", "70000"])
def test_a_bad_port_is_refused_with_its_value(port: str) -> None:
    """PORT must be a TCP port number; anything else is named, and nothing is served."""
    result = run_module("solution", MOCK="1", PORT=port)
    assert result.returncode == 2
    assert f"PORT must be a number from 1 to 65535, not {port!r}" in result.stderr


def test_a_status_left_out_of_the_allowlist_leads_nowhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """A half-written allowlist refuses the missing status's moves instead of crashing."""
    from solution.shared import states

    partial = {states.RunStatus.PENDING: frozenset({states.RunStatus.RUNNING})}
    monkeypatch.setattr(states, "ALLOWED", partial)
    assert states.can_transition(states.RunStatus.PENDING, states.RunStatus.RUNNING)
    assert not states.can_transition(states.RunStatus.RUNNING, states.RunStatus.DONE)
