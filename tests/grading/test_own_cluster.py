"""Grading on a Postgres of the grader's own: a database per submission, nothing left behind.

Issue 22: where the server binaries are installed, grading runs on a
cluster the grading process starts (socket only, in a private folder),
each submission in a database only its own roles may connect to. Whether
the run finished or was killed, no cluster, database, role or file of it
survives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from labs.grading.on_postgres import migrated_schema
from labs.grading.on_postgres_throwaway import ADMIN_DATABASE, own_cluster, submission_database
from labs.pg.cluster import find_bindir
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.grading.postgres_help import elsewhere, refused_connection, with_real_migration

pytestmark = pytest.mark.skipif(find_bindir() is None, reason="no PostgreSQL server binaries")


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A TMPDIR of the test's own that the postgres user may enter (as root, it runs the server).

    pytest's tmp_path lies under a folder only its owner may enter.
    """
    folder = Path(tempfile.mkdtemp(prefix="lab-own-cluster-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def processes_naming(text: str) -> list[str]:
    """The command lines of running processes that mention text (a cluster's folder, say)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if text in command:
                found.append(command)
    return found


def gone_within(seconds: float, *checks: object) -> bool:
    """Poll until every check (a callable) returns something false, or the time is up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(check() for check in checks):  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def test_a_killed_grading_process_leaves_no_cluster_and_no_file(shared_tmp: Path) -> None:
    """SIGKILL, which no atexit handler outlives: the server stops and its folder goes."""
    code = (
        "import time\n"
        "from labs.grading.on_postgres_throwaway import own_cluster\n"
        "print(own_cluster().root, flush=True)\n"
        "time.sleep(600)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        env={**os.environ, "TMPDIR": str(shared_tmp)},
        stdout=subprocess.PIPE,
        text=True,
    ) as grader:
        try:
            assert grader.stdout is not None
            root = Path(grader.stdout.readline().strip())
            assert root.is_relative_to(shared_tmp)
            assert (root / "data" / "postmaster.pid").is_file()
            assert processes_naming(str(root / "data"))  # the server runs
        finally:
            grader.send_signal(signal.SIGKILL)
            grader.wait()
    assert gone_within(60, root.exists, lambda: processes_naming(str(root / "data")))
    assert list(shared_tmp.iterdir()) == []


def test_a_finished_class_run_grades_on_its_own_cluster_and_leaves_nothing(
    shared_tmp: Path, tmp_path: Path
) -> None:
    """`labs grade` with no DATABASE_URL (and one that names nothing usable): a solved hand-in
    earns every Postgres point on the grader's own cluster; afterwards no server runs and its
    temporary folder is empty."""
    folder = make.fixed(tmp_path / "ada")
    with_real_migration(folder / "starter")
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("LAB_POSTGRES", "LAB_LANG", "LANG")}
    env |= {"TMPDIR": str(shared_tmp), "LANGUAGE": "en"}
    env["DATABASE_URL"] = "postgresql://koda:koda@127.0.0.1:9/koda"  # a learner's, not asked
    done = subprocess.run(
        [sys.executable, "-m", "labs", "grade", "--out", str(out), str(folder)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Postgres on a cluster of the grader's own" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("ada"))
    assert row.split()[1:3] == ["110", "110"], row  # score, out of
    assert list(shared_tmp.iterdir()) == []
    assert processes_naming(str(shared_tmp)) == []


def test_a_submissions_roles_reach_its_own_database_and_no_other(tmp_path: Path) -> None:
    """Two submissions at once: each one's role logs in to its own database, and is refused in
    the other's, in the grader's and in template1."""
    tree = make.starter_copy(tmp_path / "ada")
    versions = with_real_migration(tree).parent
    with contextlib.ExitStack() as stack:
        tenants, databases = [], []
        for _ in range(2):
            url = stack.enter_context(submission_database())
            assert url is not None
            databases.append(url.partition("?")[0].rpartition("/")[2])
            tenants.append(stack.enter_context(migrated_schema(url, versions, 120)))
        for mine, theirs in ((0, 1), (1, 0)):
            assert refused_connection(tenants[mine].url) == ""
            assert refused_connection(tenants[mine].reader_url) == ""
            for database in (databases[theirs], ADMIN_DATABASE, "template1"):
                for login in (tenants[mine].url, tenants[mine].reader_url):
                    why = refused_connection(elsewhere(login, database))
                    assert "permission denied for database" in why, (database, why)
    cluster = own_cluster()
    assert cluster is not None
    with psycopg2.connect(cluster.url(ADMIN_DATABASE)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT datname FROM pg_database WHERE datname = ANY(%s)", (databases,))
        assert cursor.fetchall() == []
        cursor.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'lab\\_%'")
        assert cursor.fetchall() == []
    connection.close()
