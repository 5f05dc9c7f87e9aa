"""Fixtures shared by every test folder: the lab's state kept away, and a real Postgres."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from labs.trees.finding import REPO_ROOT, TREE_NAMES, find_tree, import_tree
from tests.support.pgcluster import TempCluster, drop_database_of, find_bindir

# Fixtures that tests in several folders use, kept in tests/support/ (pytest reads
# pytest_plugins only here, in the root conftest).
pytest_plugins = [
    "tests.support.migrations",
    "tests.support.databases",
    "tests.support.mode_fixture",
]

# Both trees declare tables of the same names on SQLModel. Imported through the lab kit, each
# tree's tables get a registry of their own, so a test may import from both; a plain `import
# starter...` beside `import solution...` would clash in SQLModel's one default registry.
for _name in TREE_NAMES:
    if (REPO_ROOT / _name).is_dir():
        import_tree(find_tree(_name))

IN_CI = bool(os.environ.get("CI"))
NO_POSTGRES = (
    "Postgres tests skipped: no PostgreSQL server binaries found "
    "(install them, e.g. `apt-get install postgresql`, and rerun pytest)"
)


def keep_lab_state_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the lab's state folder (and XDG_STATE_HOME, for code that looks there) at folder.

    Set in the environment, so the commands a test starts use it too.
    """
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    monkeypatch.setenv("XDG_STATE_HOME", str(folder / "xdg"))
    return folder


@pytest.fixture(scope="session", autouse=True)
def session_lab_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Session fixtures, which start before any test's own, keep lab state away too."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield keep_lab_state_in(tmp_path_factory.mktemp("lab-state-session"), monkeypatch)


@pytest.fixture(autouse=True)
def lab_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test keeps the lab's state (hints, answers, backups) in a folder of its own.

    The learner's real state folder is never read or written by a test.
    """
    return keep_lab_state_in(tmp_path_factory.mktemp("lab-state"), monkeypatch)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TempCluster]:
    """A throwaway Postgres cluster for this test session (skip without Postgres)."""
    bindir = find_bindir()
    if bindir is None:
        if IN_CI:
            pytest.fail("CI requires Postgres, but no server binaries were found")
        pytest.skip(NO_POSTGRES)
    yield from running_cluster(bindir)


@pytest.fixture
def own_cluster(pg_cluster: TempCluster) -> Iterator[TempCluster]:
    """A cluster of this test's own, for tests that stop Postgres: the shared one stays up."""
    yield from running_cluster(pg_cluster.bindir)


def running_cluster(bindir: Path) -> Iterator[TempCluster]:
    """Start a throwaway cluster, hand it over, and remove it whatever happened."""
    cluster = TempCluster(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def fresh_database(pg_cluster: TempCluster) -> Iterator[str]:
    """The URL of a new empty database, dropped after the test."""
    name = f"koda_test_{uuid.uuid4().hex[:12]}"
    url = pg_cluster.create_database(name)
    yield url
    drop_database_of(pg_cluster, name)


_skipped_postgres: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Remember Postgres tests that were skipped, to fail the run in CI."""
    if report.skipped and "postgres" in report.keywords:
        _skipped_postgres.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI a skipped Postgres test is a failed run."""
    if IN_CI and _skipped_postgres and exitstatus == 0:
        print(f"\nCI: {len(_skipped_postgres)} Postgres test(s) were skipped; failing the run")
        session.exitstatus = 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the Postgres cluster, directly or through a fixture."""
    for item in items:
        if "pg_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


def pytest_report_header() -> str | None:
    """Say up front when starter/ holds a learner's work: tests describe the shipped starter."""
    try:
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "starter", "migrations/versions/starter"],
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None  # no git: nothing to compare with
    if not changed:
        return None
    return (
        "note: starter/ differs from the last commit (your lab work?); the tests that "
        "describe the untouched starter will fail: run them on a fresh clone"
    )
