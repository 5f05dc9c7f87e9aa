"""Alembic's two common failures end in one `FAILED:` line saying what to do, not a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from labs.pg.cluster import Autocommit, free_port
from labs.trees.finding import REPO_ROOT

REFERENCE = next((REPO_ROOT / "migrations" / "versions" / "solution").glob("0001_*.py"))
ADD_THE_KEY = '''"""add the unique key, after rows were stored without it"""
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_unique_constraint("runs_idempotency_key_key", "runs", ["idempotency_key"])


def downgrade() -> None:
    op.drop_constraint("runs_idempotency_key_key", "runs")
'''


def alembic(database_url: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `alembic -x tree=solution ARGS` in a subprocess, as a learner types it."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    if database_url:
        env["DATABASE_URL"] = database_url
    return subprocess.run(
        [sys.executable, "-m", "alembic", "-x", "tree=solution", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def unkeyed_first_migration(folder: Path) -> None:
    """The reference migration without its unique constraints, as revision 0001."""
    lines = [
        line
        for line in REFERENCE.read_text(encoding="utf-8").splitlines(keepends=True)
        if "sa.UniqueConstraint(" not in line
    ]
    text = re.sub(r'^revision: str = "\w+"', 'revision: str = "0001"', "".join(lines), flags=re.M)
    (folder / "0001_unkeyed.py").write_text(text, encoding="utf-8")


def test_duplicates_in_the_way_of_a_new_unique_key_say_how_to_start_over(
    tmp_path: Path, reachable_database: str
) -> None:
    """Rows stored before the key existed: FAILED names the duplicate and downgrade base."""
    unkeyed_first_migration(tmp_path)
    assert (
        alembic(reachable_database, "-x", f"versions={tmp_path}", "upgrade", "head").returncode == 0
    )
    with Autocommit(reachable_database) as cursor:
        cursor.execute("INSERT INTO solution.sessions (id, user_id, title) VALUES ('s', 'u', 't')")
        for run_id in ("r1", "r2"):
            cursor.execute(
                "INSERT INTO solution.runs (id, session_id, status, idempotency_key, input) "
                "VALUES (%s, 's', 'pending', 'same-key', 'hello')",
                (run_id,),
            )
    (tmp_path / "0002_add_the_key.py").write_text(ADD_THE_KEY, encoding="utf-8")
    done = alembic(reachable_database, "-x", f"versions={tmp_path}", "upgrade", "head")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED:")]
    assert len(failed) == 1
    assert "(idempotency_key)=(same-key) is duplicated" in failed[0]
    assert "downgrade base" in failed[0] and "upgrade head" in failed[0]


def test_a_database_that_is_not_running_names_both_ports(tmp_path: Path) -> None:
    """Nothing listening: FAILED says where it looked, and mentions 5508 and 5432."""
    url = f"postgresql://koda:koda@127.0.0.1:{free_port()}/koda"
    done = alembic(url, "upgrade", "head")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED:")]
    assert len(failed) == 1
    assert "Is Postgres running" in failed[0] and "5508" in failed[0] and "5432" in failed[0]


def test_a_wrong_password_is_one_line_too(reachable_database: str) -> None:
    """A role that does not exist is refused by the server: one FAILED line, no traceback."""
    done = alembic(reachable_database.replace("postgres@", "nobody:wrong@"), "upgrade", "head")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED:")]
    assert len(failed) == 1 and '"nobody"' in failed[0] and "DATABASE_URL" in failed[0]


def test_without_database_url_both_ports_are_offered() -> None:
    """The 'set DATABASE_URL first' message shows docker compose's port and a local server's."""
    done = alembic(None, "upgrade", "head")
    assert done.returncode != 0
    assert "FAILED: set DATABASE_URL first" in done.stdout
    assert "5508" in done.stdout and "5432" in done.stdout
