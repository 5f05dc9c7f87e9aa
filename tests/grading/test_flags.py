"""Region code that reaches outside the lesson is flagged with its region and line; --strict: 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.grading.flags import criteria_flagged, file_flags, region_flags
from labs.grading.grader import Grader
from labs.trees.finding import tree_root
from labs.trees.regions import read_lines
from tests.grading import submissions as make
from tests.support.modes import Mode

STATES = "shared/states.py"
SHIPPED = read_lines(tree_root("starter") / STATES)


def flags_of(code: str) -> list[str]:
    """The flags of states.py with code at the end of its module-level region (check 4)."""
    text = "\n".join(SHIPPED).replace("\n# END(check 4)", "\n" + code + "\n# END(check 4)")
    return [str(flag) for flag in file_flags(STATES, text.splitlines(), SHIPPED)]


def test_the_solution_and_the_starter_reach_nowhere() -> None:
    """The reference answers and the shipped starter raise no flag: the rule fits the lesson."""
    assert region_flags(tree_root("solution")) == []
    assert region_flags(tree_root("starter")) == []


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("import labs.checking.result as _r", "imports labs.checking.result"),
        ("from solution.shared import states as _s", "imports solution.shared"),
        ("import importlib", "imports importlib"),
        ("import os, sys", "imports os, sys"),
        ("_x = RunStatus.__class__", "reaches the dunder attribute __class__"),
        ("_c = can_transition.__code__", "reaches the dunder attribute __code__"),
        ("_b = __builtins__", "uses the dunder name __builtins__"),
        ("_i = __import__('os')", "uses __import__"),
        *((f"_v = {name}", f"uses {name}") for name in ("getattr", "setattr", "exec", "eval")),
        *((f"_v = {name}", f"uses {name}") for name in ("compile", "open", "globals", "vars")),
        *((f"_v = {name}", f"uses {name}") for name in ("delattr", "locals", "breakpoint")),
        ("_t: int = 'x'  # type: ignore[assignment]", "steers the typecheck"),
        ("# mypy: ignore-errors", "steers the typecheck"),
    ],
)
def test_each_reach_outside_the_lesson_is_flagged_with_its_line(code: str, what: str) -> None:
    """One flag naming the file, the line, the check the region serves and what it does."""
    found = flags_of(code)
    line = len(SHIPPED[: SHIPPED.index("# END(check 4)")]) + 1
    assert any(f"{STATES}:{line} (check 4): " in flag and what in flag for flag in found), found


@pytest.mark.parametrize(
    "code",
    [
        "import hashlib, hmac, json, uuid, time",
        "from datetime import datetime",
        "from collections import defaultdict",
        "from typing import Final",
        "_name = __name__",
        "from .errors import IllegalTransitionError as _E",
        "from enum import StrEnum as _S",
    ],
)
def test_what_a_learner_could_want_there_is_not_flagged(code: str) -> None:
    """The allowlist, the file's own imports, the tree's own modules and __name__ pass."""
    assert flags_of(code) == []


def test_an_import_added_above_the_regions_is_flagged_too() -> None:
    """Grading carries top-level imports into the spliced copy, so they are read as well."""
    lines = ["import labs.checking.result", *SHIPPED]
    found = [str(flag) for flag in file_flags(STATES, lines, SHIPPED)]
    assert found == [f"{STATES}:1 (an import above its regions): imports labs.checking.result"]
    flagged = criteria_flagged(file_flags(STATES, lines, SHIPPED))
    assert "memory-1" in flagged and "postgres-6" in flagged


def test_a_flag_serves_its_checks_criteria_and_a_comment_the_typecheck() -> None:
    """A check-4 reach marks memory-4 and postgres-4; a steering comment marks the typecheck."""
    lines = "\n".join(SHIPPED).replace(
        "\n# END(check 4)", "\nimport os as _os  # type: ignore\n# END(check 4)"
    )
    flagged = criteria_flagged(file_flags(STATES, lines.splitlines(), SHIPPED))
    assert set(flagged) == {"memory-4", "postgres-4", "typecheck"}


def test_strict_scores_the_flagged_criterion_zero_and_says_where(
    tmp_path: Path, mode: Mode
) -> None:
    """The kit's allowlist taken into a region passes check 4, unless --strict: then 0."""
    tree = make.with_region_code(tmp_path / "liar", make.KIT_ALLOWLIST) / "starter"
    lenient = Grader(tree, timeout=20.0).grade("liar")
    strict = Grader(tree, timeout=20.0, strict=True).grade("liar")
    assert lenient.outcomes["memory-4"].status == "pass"
    assert strict.outcomes["memory-4"].status == "fail"
    assert "scored 0 under --strict: shared/states.py:" in strict.outcomes["memory-4"].message
    assert strict.outcomes["memory-1"].status == "pass"  # only what the region serves
    for grade in (lenient, strict):
        assert grade.note.startswith("needs review: region code reaches outside the lesson")
