"""Fixtures for the grading tests: a graded batch of mixed submissions, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.grading.batch import grade_all
from labs.grading.criteria import TYPECHECK_POINTS, Grade
from labs.grading.grader import Grader
from labs.trees import tree_root
from tests.grading import submissions as make

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
