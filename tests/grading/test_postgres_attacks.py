"""Attacks on grading through Postgres: each gets an honest grade or "could not grade", and the
server is left as it was (issue 15's findings, each run end to end)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

from labs.grading.criteria import Outcome
from labs.grading.on_postgres import migrated_schema
from labs.grading.on_postgres_roles import TENANT_CONNECTIONS
from labs.grading.on_postgres_url import database_of_its_own
from labs.pg.cluster import TempCluster
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.grading.postgres_help import (
    RUNS_KEY,
    elsewhere,
    grading_leftovers,
    outcomes,
    postgres_outcomes,
    refused_connection,
    with_real_migration,
)

pytestmark = pytest.mark.slow  # hostile migrations on a real server


def with_region_code(tree: Path, code: str) -> Path:
    """Code run at import, from inside check 4's module-level region of a solved tree."""
    states = tree / "shared" / "states.py"
    text = states.read_text(encoding="utf-8")
    assert "\n# END(check 4)" in text
    states.write_text(text.replace("\n# END(check 4)", "\n" + code + "\n# END(check 4)"), "utf-8")
    return tree


def solved(folder: Path) -> Path:
    """A starter copy with every region solved."""
    return make.fixed(folder) / "starter"


def superusers(database_url: str) -> list[str]:
    """The server's superusers and the roles that may run programs."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolname FROM pg_roles WHERE rolname <> 'pg_execute_server_program' AND"
            " (rolsuper OR pg_has_role(oid, 'pg_execute_server_program', 'MEMBER')) ORDER BY 1"
        )
        found = [row[0] for row in cursor.fetchall()]
    connection.close()
    return found


@pytest.fixture
def marker_folder() -> Iterator[Path]:
    """A folder the database server's OS user may write in, for a side effect to show up."""
    folder = Path(tempfile.mkdtemp(prefix="lab-marker-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# The first finding: runs becomes a view filtered by a function that, read by a
# superuser, runs a program as the server's OS user and makes a lasting superuser. The view
# stays updatable, so the tree's store works through it as if nothing had changed.
VIEW_OVER_A_FUNCTION = """
op.execute("ALTER TABLE runs RENAME TO runs_kept")
op.execute('''
CREATE FUNCTION visible(run_id text) RETURNS boolean LANGUAGE plpgsql AS $body$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'COPY (SELECT 1) TO PROGRAM ' || quote_literal('touch MARKER');
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'lab_pwned') THEN
            EXECUTE 'CREATE ROLE lab_pwned SUPERUSER LOGIN';
        END IF;
    END IF;
    RETURN true;
END
$body$''')
op.execute("CREATE VIEW runs AS SELECT * FROM runs_kept WHERE visible(id)")
"""


def test_a_view_over_a_function_never_runs_as_the_reader_and_is_not_graded(
    tmp_path: Path, reachable_database: str, marker_folder: Path
) -> None:
    """A view whose function would run COPY ... TO PROGRAM is found before any read: no grade."""
    marker = marker_folder / "ran"
    tree = solved(tmp_path / "eve")
    with_real_migration(tree, then=VIEW_OVER_A_FUNCTION.replace("MARKER", str(marker)))
    found = outcomes(tree, reachable_database, ("postgres", "migration"))
    assert {o.status for o in found.values()} == {"fail"}
    for outcome in found.values():
        assert outcome.message.startswith(
            "could not grade: the migration made a view where the lesson has the table runs"
        ), outcome.message
    assert not marker.exists()
    assert superusers(reachable_database) == ["postgres"]
    assert grading_leftovers(reachable_database) == []


# The host's answers rewritten from a region: a retried clientMessageId is sent on with another
# one (a second run, under another key), and answered with the first run's id, said to be a replay.
LYING_HOST = """
import sys as _sys
import threading as _threading

_ops = _sys.modules.get("labs.checking.ops")
if _ops is not None:
    _lock, _first, _again = _threading.Lock(), {}, [0]
    _honest_http = _ops.Host.op_http

    def _lying_http(self, request):
        body = request.get("body")
        if request.get("path") != "/chat" or not isinstance(body, dict):
            return _honest_http(self, request)
        if not body.get("clientMessageId"):
            return _honest_http(self, request)
        with _lock:
            mark = (body.get("sessionId"), body.get("clientMessageId"))
            if mark not in _first:
                _first[mark] = _honest_http(self, request)
                return _first[mark]
            _again[0] += 1
            moved = dict(body, clientMessageId=body["clientMessageId"] + "-" + str(_again[0]))
            answer = _honest_http(self, dict(request, body=moved))
            first = _first[mark]
            return dict(answer, json=first["json"], text=first["text"], replayed=True)

    _ops.Host.op_http = _lying_http
"""


def test_a_lying_host_without_the_unique_key_fails_check_3_on_postgres(
    tmp_path: Path, reachable_database: str
) -> None:
    """The same runId for two rows is caught by counting every row, whatever key the host names."""
    tree = with_region_code(solved(tmp_path / "liz"), LYING_HOST)
    with_real_migration(tree, drop=(RUNS_KEY,))
    found = postgres_outcomes(tree, reachable_database)
    assert found[3].status == "fail"
    assert "that no answer named" in found[3].message, found[3].message
    assert grading_leftovers(reachable_database) == []


# Holds every connection its role may open until the grader's test says it may stop.
HOG = """
import os as _os
import time as _time

import psycopg2 as _psycopg2

_held = []
_url = _os.environ.get("DATABASE_URL")
_deadline = _time.monotonic() + 150
while _url and _time.monotonic() < _deadline:
    if len(_held) < 40:
        try:
            _held.append(_psycopg2.connect(_url))
            continue
        except _psycopg2.Error:
            pass
    if _held:
        with _held[0].cursor() as _cursor:
            _cursor.execute("SELECT to_regclass('public.hogs_may_go')")
            if _cursor.fetchone()[0] is not None:
                break
        _held[0].rollback()
    _time.sleep(0.2)
for _connection in _held:
    _connection.close()
"""


@pytest.fixture
def stock_sized_cluster(pg_cluster: TempCluster) -> Iterator[TempCluster]:
    """A cluster of a stock server's size (100 connections) that sandboxed roles log in to."""
    cluster = TempCluster(pg_cluster.bindir, auth="scram", max_connections=100)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


def grading_connections(database_url: str) -> dict[str, int]:
    """How many connections each submission's role holds now."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT usename, count(*) FROM pg_stat_activity WHERE usename LIKE 'lab_grade_%'"
            " GROUP BY usename"
        )
        found = {str(name): int(count) for name, count in cursor.fetchall()}
    connection.close()
    return found


def test_three_hand_ins_holding_connections_leave_an_honest_neighbour_its_grade(
    tmp_path: Path, stock_sized_cluster: TempCluster
) -> None:
    """Each role is held to its connection limit, so three hogs at once cannot starve a fourth."""
    url = stock_sized_cluster.create_database("koda")
    hogs = []
    for name in ("hog1", "hog2", "hog3"):
        tree = with_region_code(solved(tmp_path / name), HOG)
        with_real_migration(tree)
        hogs.append(tree)
    honest = solved(tmp_path / "ada")
    with_real_migration(honest)
    graded: list[dict[int, Outcome]] = []
    failures: list[str] = []  # a grading thread's own error, shown in the assertion

    def grade(tree: Path) -> None:
        try:
            graded.append(postgres_outcomes(tree, url))
        except Exception:
            failures.append(traceback.format_exc())

    threads = [threading.Thread(target=grade, args=(tree,)) for tree in hogs]
    for thread in threads:
        thread.start()
    peak: dict[str, int] = {}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        held = grading_connections(url)
        peak = {name: max(count, peak.get(name, 0)) for name, count in {**peak, **held}.items()}
        if len(held) == 3 and sum(held.values()) >= 3 * (TENANT_CONNECTIONS - 2):
            break
        time.sleep(0.5)
    try:
        assert not failures, failures[0]
        assert len(peak) == 3 and sum(peak.values()) >= 3 * (TENANT_CONNECTIONS - 2), peak
        found = postgres_outcomes(honest, url)
        assert {n: o.status for n, o in found.items()} == dict.fromkeys(range(1, 7), "pass"), found
        assert max(grading_connections(url).values()) <= TENANT_CONNECTIONS
    finally:
        with psycopg2.connect(url) as connection, connection.cursor() as cursor:
            cursor.execute("CREATE TABLE public.hogs_may_go ()")
        connection.close()
        for thread in threads:
            thread.join(timeout=240)
    assert not failures, failures[0]
    assert len(graded) == 3
    assert grading_leftovers(url) == []


ROLE_ATTEMPTS = """
from sqlalchemy import text as _text

_bind = op.get_bind()
for _statement in (
    "CREATE ROLE lab_sidekick LOGIN SUPERUSER PASSWORD 'x'",
    "CREATE ROLE lab_sidekick LOGIN PASSWORD 'x'",
    "ALTER ROLE CURRENT_USER SUPERUSER",
    "ALTER ROLE CURRENT_USER CREATEROLE",
    "ALTER ROLE CURRENT_USER CONNECTION LIMIT -1",
    "GRANT pg_execute_server_program TO CURRENT_USER",
    "ALTER ROLE postgres PASSWORD 'taken'",
    "CREATE DATABASE lab_sidekick",
):
    try:
        with _bind.begin_nested():
            _bind.execute(_text(_statement))
    except Exception:
        pass
"""


def test_a_migration_that_tries_to_make_or_change_roles_is_refused_and_leaves_nothing(
    tmp_path: Path, reachable_database: str
) -> None:
    """The role's privileges refuse every attempt; the grade is the honest one; nothing stays."""
    tree = solved(tmp_path / "rex")
    with_real_migration(tree, then=ROLE_ATTEMPTS)
    found = postgres_outcomes(tree, reachable_database)
    assert {o.status for o in found.values()} == {"pass"}, found
    with psycopg2.connect(reachable_database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT rolname FROM pg_roles WHERE rolname LIKE 'lab_sidekick%'")
        assert cursor.fetchall() == []
        cursor.execute("SELECT datname FROM pg_database WHERE datname = 'lab_sidekick'")
        assert cursor.fetchall() == []
    connection.close()
    assert superusers(reachable_database) == ["postgres"]
    assert grading_leftovers(reachable_database) == []


GRADE_ONE = """
import sys
from pathlib import Path
from labs.grading.criteria import CRITERIA
from labs.grading.grader import Grader
grader = Grader(Path(sys.argv[1]), timeout=60.0, database_url=sys.argv[2])
grader.outcome(next(c for c in CRITERIA if c.key == "postgres-1"))
"""


def killed_mid_grading(tree: Path, database_url: str) -> None:
    """Start grading the tree on Postgres in a process of its own; kill it once its role logs in."""
    process = subprocess.Popen(
        [sys.executable, "-c", GRADE_ONE, str(tree), database_url],
        cwd=REPO_ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while not grading_connections(database_url) and time.monotonic() < deadline:
            assert process.poll() is None, "the grading finished before it could be killed"
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert grading_leftovers(database_url) != []


@pytest.mark.parametrize("cleaner", ["the next run", "labs doctor --clean"])
def test_what_an_interrupted_run_left_is_removed_by_its_name(
    tmp_path: Path, reachable_database: str, cleaner: str
) -> None:
    """Kill the grader mid-way: its roles and schema stay, until the next run or doctor --clean."""
    tree = solved(tmp_path / "ivy")
    with_real_migration(tree, then="import time\ntime.sleep(30)")
    killed_mid_grading(tree, reachable_database)
    if cleaner == "the next run":
        honest = solved(tmp_path / "ada")
        with_real_migration(honest)
        assert {o.status for o in postgres_outcomes(honest, reachable_database).values()} == {
            "pass"
        }
    else:
        done = subprocess.run(
            [sys.executable, "-m", "labs", "doctor", "--clean"],
            cwd=REPO_ROOT,
            env={**os.environ, "DATABASE_URL": reachable_database},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "removed" in done.stdout, done.stdout + done.stderr
    assert grading_leftovers(reachable_database) == []


def test_on_database_urls_server_each_submission_has_a_database_only_its_roles_reach(
    tmp_path: Path, reachable_database: str
) -> None:
    """LAB_POSTGRES=url: two submissions graded at once each get a database of their own, made
    by the grader's role, not DATABASE_URL's; each one's roles log in there and are refused in
    the other's; nothing of either stays."""
    tree = solved(tmp_path / "ada")
    versions = with_real_migration(tree).parent
    given = reachable_database.partition("?")[0].rpartition("/")[2]
    with contextlib.ExitStack() as stack:
        tenants, databases = [], []
        for _ in range(2):
            url = stack.enter_context(database_of_its_own(reachable_database))
            databases.append(url.partition("?")[0].rpartition("/")[2])
            tenants.append(stack.enter_context(migrated_schema(url, versions, 120)))
        assert given not in databases and len(set(databases)) == 2
        for mine, theirs in ((0, 1), (1, 0)):
            for login in (tenants[mine].url, tenants[mine].reader_url):
                assert refused_connection(login) == ""
                why = refused_connection(elsewhere(login, databases[theirs]))
                assert "permission denied for database" in why, why
    assert grading_leftovers(reachable_database) == []
