"""The lesson's seed script: a demo session with pending runs, then the worker sees them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from labs.trees.finding import REPO_ROOT
from tests.support.english import english_runs
from tests.support.migrations import migrate, run_lab, unfixed_starter_migration
from tests.support.pgcluster import TempCluster, drop_database_of

TREES = ["starter", "solution"]
RUN_LINE = re.compile(r"^  ([0-9A-HJKMNP-TV-Z]{26})  pending  ", re.MULTILINE)
ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def run_module(module: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m module` from the project root with only the given store settings."""
    clean = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DATABASE_URL", "SELFTEST")}
    return subprocess.run(
        [sys.executable, "-m", module],
        cwd=REPO_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("tree", TREES)
def test_the_seed_prints_pending_runs_on_memory(tree: str) -> None:
    """Under MOCK=1 the seed lists three pending runs and the worker's query sees them all."""
    done = run_module(f"{tree}.seed", MOCK="1")
    assert done.returncode == 0, done.stderr
    assert len(set(RUN_LINE.findall(done.stdout))) == 3
    assert "worker's query in this process sees 3 pending run(s)" in done.stdout


@pytest.mark.parametrize("tree", TREES)
def test_the_seed_and_the_worker_print_english_whatever_the_locale(tree: str) -> None:
    """The trees never import the kit: under a Chinese locale they print what they do in English."""
    chinese = {"LAB_LANG": "zh_CN", "LANGUAGE": "", "LC_ALL": "", "LANG": "zh_CN.UTF-8"}
    english = run_module(f"{tree}.seed", MOCK="1", LAB_LANG="en")
    seeded = run_module(f"{tree}.seed", MOCK="1", **chinese)
    unconfigured = run_module(f"{tree}.worker", **chinese)  # no store: the error says how to pick
    assert seeded.returncode == 0, seeded.stderr
    assert len(set(RUN_LINE.findall(seeded.stdout))) == 3
    assert ULID.sub("<id>", seeded.stdout) == ULID.sub("<id>", english.stdout)
    assert english_runs(seeded.stdout), seeded.stdout
    assert unconfigured.returncode == 2
    assert unconfigured.stderr.startswith("error: no store configured: set MOCK=1")


def test_both_trees_ship_the_same_seed_script() -> None:
    """The seed lies outside every region, so both trees carry it byte for byte."""
    assert (REPO_ROOT / "starter" / "seed.py").read_bytes() == (
        REPO_ROOT / "solution" / "seed.py"
    ).read_bytes()


def test_the_seed_without_a_store_names_both_options() -> None:
    """With neither MOCK=1 nor DATABASE_URL the seed exits 2 and says how to choose a store."""
    done = run_module("starter.seed")
    assert done.returncode == 2
    assert "MOCK=1" in done.stderr and "DATABASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_seed_on_an_unmigrated_database_says_so(fresh_database: str) -> None:
    """On a database without the tables the seed fails with a clear error, not a traceback."""
    done = run_module("solution.seed", DATABASE_URL=fresh_database)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr


@pytest.fixture
def migrated_database(
    request: pytest.FixtureRequest, pg_cluster: TempCluster, tmp_path: Path
) -> str:
    """A fresh database holding the tree's tables: the solution's migration or the starter's."""
    tree = request.param
    name = f"koda_seed_{uuid.uuid4().hex[:10]}"
    url = pg_cluster.create_database(name)
    request.addfinalizer(lambda: drop_database_of(pg_cluster, name))
    if tree == "solution":
        migrate(url, "solution")
    else:  # the learner's first migration, generated from the schema as shipped
        unfixed_starter_migration(url, tmp_path)
        migrate(url, "starter", tmp_path)
    return url


@pytest.mark.parametrize("migrated_database", TREES, indirect=True)
def test_a_worker_in_another_process_lists_the_seeded_runs(
    migrated_database: str, request: pytest.FixtureRequest
) -> None:
    """On Postgres, `python -m <tree>.worker --once` lists every run the seed wrote."""
    tree = request.node.callspec.params["migrated_database"]
    # alembic -x tree=T puts T's tables in schema T: the learner's DB_SCHEMA names it.
    seeded = run_lab(f"{tree}.seed", database_url=migrated_database, schema=tree)
    assert seeded.returncode == 0, seeded.stderr
    run_ids = set(RUN_LINE.findall(seeded.stdout))
    assert len(run_ids) == 3
    assert f"python -m {tree}.worker --once" in seeded.stdout
    worker = run_lab(f"{tree}.worker", "--once", database_url=migrated_database, schema=tree)
    assert worker.returncode == 0, worker.stderr
    assert "3 pending run(s)" in worker.stdout
    assert all(run_id in worker.stdout for run_id in run_ids)
