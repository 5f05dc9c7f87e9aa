"""The three learner checkouts every platform's contract is run on: solved, unsolved, attacking."""

from __future__ import annotations

import json
from pathlib import Path

from labs.grading.criteria import CRITERIA
from tests.grading import submissions as make
from tests.grading.mistakes import migrations as variant

TREES = ("solved", "unsolved", "attacking")


def attack(report: Path) -> str:
    """What pip/ and venv.py do when imported: write down that they were, and by which uid."""
    return (
        "import os\n"
        f"with open({str(report)!r}, 'a') as _f:\n"
        "    _f.write(f'{__name__} imported by uid {os.geteuid()}\\n')\n"
    )


def learner_checkout(tree: str, where: Path, report: Path) -> Path:
    """A learner's repository: the starter solved, untouched, or untouched and attacking.

    The attacking one has a `pip/` package and a `venv.py` at its root, which
    report to report when imported, and a forged result.json claiming every
    point where Classroom 50 reads one.
    """
    if tree == "solved":
        make.fixed(where)
        variant.place(where / "starter", variant.reference())
    else:
        make.starter_copy(where)
    if tree == "attacking":
        (where / "pip").mkdir()
        for name in ("__init__.py", "__main__.py"):
            (where / "pip" / name).write_text(attack(report), encoding="utf-8")
        (where / "venv.py").write_text(attack(report), encoding="utf-8")
        forged = {"score": 110, "max-score": 110, "tests": []}
        (where / "result.json").write_text(json.dumps(forged), encoding="utf-8")
    return where


def unsolved_earned() -> set[str]:
    """What the untouched starter meets: checks 1, 2 and 6 on memory, and the typecheck.

    On Postgres it has no tables: the migration that makes them is the learner's to write.
    """
    return {
        c.title
        for c in CRITERIA
        if (c.kind == "memory" and c.check in (1, 2, 6)) or c.kind == "typecheck"
    }
