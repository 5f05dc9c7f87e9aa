"""Fixtures for the grading tests: a graded batch of mixed submissions, built once."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from labs.grading.batch import grade_all
from labs.grading.criteria import TYPECHECK_POINTS, Grade
from labs.grading.grader import Grader
from labs.pg.cluster import Autocommit, TempCluster
from labs.trees.finding import tree_root
from tests.grading import submissions as make
from tests.support.pgcluster import drop_database_of

# Short, so the endless loops cost little, yet room for a loaded machine: a healthy tree's
# host (its sandbox, the imports, the six checks) takes a few seconds at most.
TIMEOUT = 10.0


@pytest.fixture(scope="session")
def batch_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A class's hand-ins: fixed, untouched, half-fixed and every broken kind."""
    root = tmp_path_factory.mktemp("class")
    solved = make.fixed(root / "build" / "ada")
    make.with_migration(solved / "starter")
    make.zipped(solved, root / "ada.zip")
    make.starter_copy(root / "ben")
    make.fixed(root / "cho", {4})
    make.with_syntax_error(root / "dev")
    make.with_endless_import(root / "eli")
    make.with_endless_transition(root / "fay")
    make.with_deleted_file(root / "gus")
    make.not_a_zip(root / "hal.zip")
    return root


@pytest.fixture(scope="session")
def batch(batch_folder: Path) -> dict[str, Grade]:
    """The batch above, graded, by submission name."""
    names = ["ada.zip", "ben", "cho", "dev", "eli", "fay", "gus", "hal.zip"]
    grades = grade_all([batch_folder / name for name in names], timeout=TIMEOUT, database_url=None)
    return {grade.submission: grade for grade in grades}


@pytest.fixture(scope="session")
def typecheck_points() -> dict[str, int]:
    """What the shipped starter and solution earn for the typecheck, as a learner's copy would."""
    return {
        name: TYPECHECK_POINTS if Grader(tree_root(name)).typecheck().passed else 0
        for name in ("starter", "solution")
    }


@contextlib.contextmanager
def sandbox_reachable_database(pg_cluster: TempCluster) -> Iterator[str]:
    """A new empty database whose socket the sandboxes' users may reach, dropped afterwards.

    The shared cluster keeps its socket to its owner; grading logs in from a
    sandbox running as another user, as it would to an instructor's server,
    so the folder may be entered (not listed) and the socket connected to.
    """
    sockets = [
        path for path in pg_cluster.socket_dir.glob(".s.PGSQL.*") if not path.name.endswith(".lock")
    ]
    # Opened for this test only: the shared cluster is private again afterwards.
    before = {path: path.stat().st_mode & 0o777 for path in [pg_cluster.root, *sockets]}
    pg_cluster.root.chmod(0o711)
    for socket_file in sockets:
        socket_file.chmod(0o777)
    name = f"koda_test_{uuid.uuid4().hex[:12]}"
    url = pg_cluster.create_database(name)
    try:
        yield url
    finally:
        drop_database_of(pg_cluster, name)
        for path, mode in before.items():
            path.chmod(mode)


@pytest.fixture
def reachable_database(pg_cluster: TempCluster) -> Iterator[str]:
    """A new empty database the sandboxes' users may reach, for one test."""
    with sandbox_reachable_database(pg_cluster) as url:
        yield url


@pytest.fixture
def createdb_database(pg_cluster: TempCluster) -> Iterator[str]:
    """A new database owned by a role of its own with CREATEDB and nothing more (as the README's
    and compose's koda), and that role's URL to it."""
    role = f"koda_{uuid.uuid4().hex[:8]}"
    with sandbox_reachable_database(pg_cluster) as url:
        name = make_url(url).database
        with Autocommit(url) as cursor:
            cursor.execute(f'CREATE ROLE "{role}" LOGIN CREATEDB')
            cursor.execute(f'ALTER DATABASE "{name}" OWNER TO "{role}"')
        try:
            yield make_url(url).set(username=role, password=None).render_as_string(False)
        finally:
            with Autocommit(url) as cursor:
                cursor.execute(f'ALTER DATABASE "{name}" OWNER TO CURRENT_USER')
                cursor.execute(f'DROP ROLE "{role}"')
