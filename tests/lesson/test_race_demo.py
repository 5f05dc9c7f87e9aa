"""python -m labs race: the naive path duplicates, the constraint path never does."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from labs.lesson.race import run_race
from labs.pg.cluster import Autocommit, free_port
from labs.trees.finding import REPO_ROOT


def race_command(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m labs race ARGS` without the shell's DATABASE_URL."""
    return subprocess.run(
        [sys.executable, "-m", "labs", "race", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
    )


def test_check_then_insert_duplicates_while_the_constraint_keeps_one_row(
    fresh_database: str,
) -> None:
    """With the window held open, 16 racers leave 16 naive rows and one guarded row."""
    outcome = run_race(fresh_database, requests=16, delay_ms=50)
    assert outcome.naive is not None and outcome.guarded is not None
    assert outcome.naive.rows == 16 and outcome.naive.distinct_run_ids == 16
    assert outcome.guarded.rows == 1 and outcome.guarded.distinct_run_ids == 1


def test_the_race_command_prints_both_paths_side_by_side(fresh_database: str) -> None:
    """The command names both paths, the duplicate count and the pause it used."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "labs",
            "race",
            "--requests",
            "8",
            "--delay-ms",
            "50",
            "--database-url",
            fresh_database,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
    )
    assert done.returncode == 0, done.stderr
    assert "naive check-then-insert" in done.stdout and "unique constraint" in done.stdout
    assert "7 duplicate rows" in done.stdout and "one run, no duplicates" in done.stdout
    assert "50 ms pause" in done.stdout


def test_the_race_leaves_no_demonstration_tables_behind(fresh_database: str) -> None:
    """The demo schema without the unique constraint is dropped once the race is over."""
    import psycopg2

    run_race(fresh_database, requests=4, delay_ms=0)
    with psycopg2.connect(fresh_database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'koda_race_%'")
        row = cursor.fetchone()
    connection.close()
    assert row == (0,)


@pytest.mark.parametrize(
    ("option", "value"),
    [("--requests", "200"), ("--requests", "1"), ("--delay-ms", "1001"), ("--delay-ms", "-5")],
)
def test_out_of_range_numbers_are_refused_naming_the_option(option: str, value: str) -> None:
    """The same limits as the dashboard's form: argparse names the option and the range."""
    done = race_command(option, value, "--database-url", "postgresql://127.0.0.1:1/unused")
    assert done.returncode == 2
    assert f"argument {option}: must be from" in done.stderr and value in done.stderr


def test_a_database_nobody_listens_on_is_one_line_not_a_traceback() -> None:
    """Nothing on the port: one error line saying what failed and what to check, exit 2."""
    done = race_command("--database-url", f"postgresql://127.0.0.1:{free_port()}/x")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and "Connection refused" in lines[0] and "is Postgres running" in lines[0]
    )


def test_running_out_of_connections_is_one_line_suggesting_fewer_requests(
    fresh_database: str,
) -> None:
    """A role allowed fewer connections than requests: a clear line, not a traceback."""
    role = f"racer_{uuid.uuid4().hex[:8]}"
    with Autocommit(fresh_database) as cursor:
        cursor.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 3")
    try:
        done = race_command(
            "--requests", "8", "--database-url", fresh_database.replace("postgres@", f"{role}@")
        )
    finally:
        with Autocommit(fresh_database) as cursor:
            cursor.execute(f"DROP ROLE {role}")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "too many connections" in lines[0] and "fewer --requests" in lines[0]


def test_the_naive_run_without_a_pause_only_talks_about_what_ran(fresh_database: str) -> None:
    """--naive --delay-ms 0: no constraint path and no pause in the numbers or the closing text."""
    done = race_command(
        "--naive", "--delay-ms", "0", "--requests", "4", "--database-url", fresh_database
    )
    assert done.returncode == 0, done.stderr
    assert "no pause between check and insert" in done.stdout
    assert "unique constraint (ON CONFLICT)" not in done.stdout
    assert "The pause" not in done.stdout and "constraint path" not in done.stdout
    assert "Run without --naive" in done.stdout
