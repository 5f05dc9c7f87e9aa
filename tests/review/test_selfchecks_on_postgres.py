"""The six self-checks and the constraints command on Postgres, run as a learner runs them."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg2
import wcwidth

from tests.support.english import english_runs
from tests.support.migrations import migrate, run_lab, unfixed_starter_migration


def pending_count(url: str, schema: str) -> int:
    """How many runs in schema are pending, straight from the table."""
    connection = psycopg2.connect(url)
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT count(*) FROM {schema}.runs WHERE status = 'pending'")
            row = cursor.fetchone()
            assert row is not None
            (count,) = row
    finally:
        connection.close()
    return int(count)


def check_lines(output: str) -> dict[str, str]:
    """Map each check number to PASS or FAIL from the printed report."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^\s+(\d) \S* ?(PASS|FAIL)", output, re.M)}


def test_the_solution_passes_six_on_postgres_and_can_be_run_again(solution_database: str) -> None:
    """SELFTEST=1 python -m solution twice on one database: six pass, no run is left pending."""
    for _ in range(2):
        done = run_lab("solution", database_url=solution_database, selftest=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().endswith("6 passed, 0 failed")
        assert pending_count(solution_database, "solution") == 0


def test_before_any_migration_the_starter_gets_one_sentence(fresh_database: str) -> None:
    """No tables yet: the report says, in one sentence, which schema and which command."""
    done = run_lab("starter", database_url=fresh_database, selftest=True)
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr
    (sentence,) = [line for line in done.stdout.splitlines() if "could not run" in line]
    assert 'the starter tree has no tables in schema "starter"' in sentence
    assert "`alembic -x tree=starter upgrade head`" in sentence


def test_the_starter_on_its_unfixed_migration_fails_3_4_and_5(
    fresh_database: str, tmp_path: Path
) -> None:
    """As shipped, on Postgres too: 1, 2 and 6 pass; 3, 4, 5 fail pointing at their TODOs."""
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database, "starter", tmp_path)
    done = run_lab("starter", database_url=fresh_database, selftest=True)
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert check_lines(done.stdout) == {
        "1": "PASS",
        "2": "PASS",
        "3": "FAIL",
        "4": "FAIL",
        "5": "FAIL",
        "6": "PASS",
    }
    assert "TODO(check 4)" in done.stdout
    assert re.search(
        r"2 rows at seq 0\n\s+hint:\s+starter/shared/schema\.py:\d+\s+TODO\(check 5\)", done.stdout
    )
    assert done.stdout.strip().endswith("3 passed, 3 failed")


def test_the_constraints_command_shows_both_keys_for_the_solution(solution_database: str) -> None:
    """python -m labs constraints --tree solution lists both unique constraints and exits 0."""
    done = run_lab("labs", "constraints", "--tree", "solution", database_url=solution_database)
    assert done.returncode == 0, done.stderr
    assert re.search(
        r"runs\s+unique constraint\s+runs_idempotency_key_key\s+UNIQUE "
        r"\(idempotency_key\)",
        done.stdout,
    )
    assert re.search(
        r"messages\s+unique constraint\s+messages_run_id_seq_key\s+UNIQUE "
        r"\(run_id, seq\)",
        done.stdout,
    )


def test_the_constraints_command_speaks_chinese_in_lined_up_columns(
    solution_database: str,
) -> None:
    """--lang zh_CN: the kinds and sentences are Chinese; each name starts in the same column."""
    done = run_lab(
        "labs",
        "--lang",
        "zh_CN",
        "constraints",
        "--tree",
        "solution",
        database_url=solution_database,
    )
    assert done.returncode == 0, done.stderr
    assert "唯一约束" in done.stdout and not english_runs(done.stdout), done.stdout
    starts = {
        wcwidth.width(line[: line.index(name)])
        for line in done.stdout.splitlines()
        if re.match(r"  (sessions|runs|messages) ", line)
        for name in re.findall(r"\b\w+_(?:pkey|key|idx)\b", line)[:1]
    }
    assert len(starts) == 1, done.stdout


def test_the_constraints_command_names_what_the_starter_lacks(
    fresh_database: str, tmp_path: Path
) -> None:
    """On the unfixed starter schema both keys are reported missing, each with its TODO."""
    unfixed_starter_migration(fresh_database, tmp_path)
    migrate(fresh_database, "starter", tmp_path)
    done = run_lab("labs", "constraints", "--tree", "starter", database_url=fresh_database)
    assert done.returncode == 1
    assert re.search(r"MISSING\s+runs \(idempotency_key\).*TODO\(check 3\)", done.stdout)
    assert re.search(r"MISSING\s+messages \(run_id, seq\).*TODO\(check 5\)", done.stdout)
