"""python -m labs race: the naive path duplicates, the constraint path never does."""

from __future__ import annotations

import os
import subprocess
import sys

from labs.race import run_race
from labs.trees import REPO_ROOT


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
