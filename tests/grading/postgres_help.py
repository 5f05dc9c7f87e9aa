"""Helpers for the grading tests on Postgres: migrations beside a tree, outcomes, leftovers."""

from __future__ import annotations

from pathlib import Path

import psycopg2

from labs.grading.criteria import CRITERIA, Outcome
from labs.grading.grader import Grader
from labs.trees.finding import REPO_ROOT

REFERENCE = next((REPO_ROOT / "migrations" / "versions" / "solution").glob("0001_*.py"))
RUNS_KEY = 'sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),'
MESSAGES_KEY = 'sa.UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),'
LEFTOVER = r"^lab_(grade|read)_"


def with_real_migration(
    tree: Path, *, constraints: bool = True, drop: tuple[str, ...] = (), then: str = ""
) -> Path:
    """Put the reference migration beside the tree: whole, without its constraints, or cut.

    `drop` names lines to leave out; `then` is Python appended to upgrade().
    """
    lines = REFERENCE.read_text(encoding="utf-8").splitlines(keepends=True)
    left_out = (RUNS_KEY, MESSAGES_KEY) if not constraints else drop
    lines = [line for line in lines if not any(cut in line for cut in left_out)]
    text = "".join(lines)
    if then:
        marker = "\n\ndef downgrade()"
        body = "".join(f"    {line}\n" if line else "\n" for line in then.strip("\n").split("\n"))
        text = text.replace(marker, "\n" + body + marker, 1)
    versions = tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True, exist_ok=True)
    script = versions / "0001_learner.py"
    script.write_text(text, encoding="utf-8")
    return script


def outcomes(tree: Path, database_url: str | None, kinds: tuple[str, ...]) -> dict[str, Outcome]:
    """The outcomes of the criteria of these kinds (postgres, migration, memory), by key."""
    grader = Grader(tree, timeout=20.0, database_url=database_url)
    return {c.key: grader.outcome(c) for c in CRITERIA if c.kind in kinds}


def postgres_outcomes(tree: Path, database_url: str) -> dict[int, Outcome]:
    """The six Postgres check outcomes of one submission."""
    found = outcomes(tree, database_url, ("postgres",))
    return {n: found[f"postgres-{n}"] for n in range(1, 7)}


def grading_leftovers(database_url: str) -> list[str]:
    """Roles, schemas and databases a grading run made and did not drop."""
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolname FROM pg_roles WHERE rolname ~ %(name)s"
            " UNION ALL SELECT nspname FROM pg_namespace WHERE nspname ~ %(name)s"
            " UNION ALL SELECT datname FROM pg_database WHERE datname ~ %(name)s",
            {"name": LEFTOVER},
        )
        found = [row[0] for row in cursor.fetchall()]
    connection.close()
    return found


def refused_connection(url: str) -> str:
    """Why Postgres refused a login with url ("" when it let it in)."""
    try:
        psycopg2.connect(url, connect_timeout=10).close()
    except psycopg2.Error as error:
        return str(error)
    return ""


def elsewhere(url: str, database: str) -> str:
    """The same login, to another database of the same server."""
    base, _, query = url.partition("?")
    return base.rpartition("/")[0] + f"/{database}" + (f"?{query}" if query else "")
