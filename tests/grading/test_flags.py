"""Region code that reaches outside the lesson is flagged with its region and line; --strict: 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.grading.criteria import CRITERIA
from labs.grading.flags import Flag, criteria_flagged, file_flags, region_flags
from labs.grading.grader import Grader
from labs.trees.finding import tree_root
from labs.trees.regions import copy_tree, read_lines
from tests.grading import submissions as make
from tests.grading.mistakes.catalogue import CATALOGUE, Answer, build
from tests.support.modes import Mode

STATES = "shared/states.py"
SHIPPED = read_lines(tree_root("starter") / STATES)
END_LINE = SHIPPED.index("# END(check 4)") + 1  # the first line of code put before it


def flagged(code: str, tree: Path | None = None) -> list[Flag]:
    """The flags of states.py with code at the end of its module-level region (check 4)."""
    text = "\n".join(SHIPPED).replace("\n# END(check 4)", "\n" + code + "\n# END(check 4)")
    return file_flags(STATES, text.splitlines(), SHIPPED, tree)


def flags_of(code: str, tree: Path | None = None) -> list[str]:
    """The flags of that code as text: file:line (check 4): what it does."""
    return [str(flag) for flag in flagged(code, tree)]


def test_the_solution_and_the_starter_reach_nowhere() -> None:
    """The reference answers and the shipped starter raise no flag: the rule fits the lesson."""
    assert region_flags(tree_root("solution")) == []
    assert region_flags(tree_root("starter")) == []


@pytest.mark.parametrize("answer", CATALOGUE, ids=[a.name for a in CATALOGUE])
def test_each_learners_answer_in_the_catalogue_reaches_nowhere(
    tmp_path: Path, answer: Answer
) -> None:
    """Honest answers, right or wrong (uuid5, blake2b, json, the clock's minute): no flag."""
    assert region_flags(build(answer, tmp_path / answer.name)) == []


@pytest.mark.parametrize(
    "code",
    [
        "import operator",
        "import contextlib, dataclasses",
        "import secrets",
        "import base64",
        "from math import inf as _inf",
        "from string import Formatter as _F",
        "import threading",  # the store imports it; states.py does not
        "from importlib import import_module as _m",
        "from . import keys as _k",
        "from .. import infra as _i",
        "from ..infra.memory import MemoryStore as _M",
        "from ... import outside as _o",
        "from typing import *",
    ],
)
def test_an_import_outside_the_allowlist_is_flagged(code: str) -> None:
    """Only the listed modules, the file's own imports and the tree modules it imports."""
    found = flags_of(code)
    assert any(f"{STATES}:{END_LINE} (check 4): imports" in flag for flag in found), found


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ("import typing\n_m = typing.sys.modules", "reaches the module sys through typing"),
        ("from typing import sys as _s", "reaches the module sys through typing"),
        ("import uuid\n_run = uuid.os.system", "reaches the module os through uuid"),
        ("from uuid import os as _os", "reaches the module os through uuid"),
        ("import enum\n_g = enum.bltns.getattr", "reaches the module builtins through enum"),
        ("import json\n_c = json.codecs", "reaches the module codecs through json"),
        ("import re\n_c = re.copyreg", "reaches the module copyreg through re"),
        ("import collections\n_s = collections._sys", "the private name collections._sys"),
        ("import hmac\n_h = hmac._hashlib", "the private name hmac._hashlib"),
        ("import typing\n_t = [typing][0].sys", "uses the module typing as a value"),
        ("import typing\n_t = typing", "uses the module typing as a value"),
        ("_e = errors", "uses the module shared.errors as a value"),
    ],
)
def test_an_attribute_that_leads_to_a_module_outside_the_allowlist_is_flagged(
    code: str, what: str
) -> None:
    """A module on the list can hold one that is not: typing.sys, uuid.os, enum's builtins."""
    found = flags_of(code)
    line = END_LINE + code.count("\n")
    assert any(f"{STATES}:{line} (check 4): " in flag and what in flag for flag in found), found


@pytest.mark.parametrize(
    ("imports", "code", "what"),
    [
        ("import os", "_run = errors.os.system", "reaches shared.errors.os, which shared.errors"),
        (
            "from os import system",
            "_run = errors.system",
            "reaches shared.errors.system, which shared.errors takes from os.system",
        ),
        ("import sys as _sys", "_m = errors._sys", "the private name shared.errors._sys"),
    ],
)
def test_a_name_a_tree_module_imports_from_outside_the_allowlist_is_flagged(
    tmp_path: Path, imports: str, code: str, what: str
) -> None:
    """errors.os, where the shipped errors.py imports os: the tree is no way around the list."""
    tree = copy_tree(tree_root("starter"), tmp_path / "starter")
    errors = tree / "shared" / "errors.py"
    errors.write_text(imports + "\n" + errors.read_text(encoding="utf-8"), encoding="utf-8")
    found = flags_of(code, tree)
    assert any(f"{STATES}:{END_LINE} (check 4): " in flag and what in flag for flag in found), found
    assert flags_of("_e = errors.IllegalTransitionError", tree) == []


@pytest.mark.parametrize(
    "code",
    [
        'import operator, typing\n_il = operator.attrgetter("sys.modules")(typing)["importlib"]',
        'import operator\n_f = operator.methodcaller("upper")',
        "from operator import attrgetter as _get",
        "import typing\n_h = typing.get_type_hints",
        "from typing import get_type_hints as _h",
        "from typing import ForwardRef as _F",
        "import types\n_f = types.FunctionType",
        "from types import CodeType as _C",
    ],
)
def test_a_helper_that_fetches_or_runs_by_name_is_flagged(code: str) -> None:
    """attrgetter, methodcaller, get_type_hints (it evaluates strings), code-made functions."""
    line = END_LINE + code.count("\n")
    found = flags_of(code)
    assert any(f"{STATES}:{line} (check 4): " in flag for flag in found), found


@pytest.mark.parametrize(
    ("code", "what"),
    [
        ('_s = "{0.__class__}".format(RunStatus)', "names the dunder __class__ in a string"),
        ('_s = "{0.__globals__[errors]}".format(can_transition)', "the dunder __globals__"),
        ("def __getattr__(name: str) -> str:\n    return name", "defines the dunder name"),
        ("from enum import __all__ as _all", "imports the dunder name __all__"),
        ("_g = (x for x in ()).gi_frame.f_globals", "the interpreter's internals (gi_frame)"),
        (
            "match RunStatus.DONE:\n    case object(__class__=_c):\n        pass",
            "matches the dunder name __class__",
        ),
    ],
)
def test_a_dunder_in_any_form_and_a_frames_insides_are_flagged(code: str, what: str) -> None:
    """Dunders hide in strings str.format follows, definitions, imports and match patterns."""
    found = flags_of(code)
    lines = range(END_LINE, END_LINE + code.count("\n") + 1)
    assert any(f"{STATES}:{n} (check 4): " in f and what in f for f in found for n in lines), found


@pytest.mark.parametrize(
    "code",
    [
        "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    _x: int = 'text'",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    _x: int = 1\nelse:\n    _x = 'x'",
        "import typing\nif not typing.TYPE_CHECKING:\n    _x: int = 'text'",
        "from typing import TYPE_CHECKING as _checking\n_x: int = 'text' if not _checking else 1",
        "MYPY = False\nif not MYPY:\n    _x: int = 'text'",
        "import typing\n@typing.no_type_check\ndef _f() -> int:\n    return 'text'",
    ],
)
def test_a_branch_the_typecheck_skips_is_flagged_against_the_typecheck(code: str) -> None:
    """`if not TYPE_CHECKING:` (or MYPY, or no_type_check) runs code mypy never reads."""
    found = flagged(code)
    assert found and all(flag.check == 4 for flag in found), found
    assert any(flag.typecheck for flag in found), found
    assert "typecheck" in criteria_flagged(found)


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
    assert any(f"{STATES}:{END_LINE} (check 4): " in flag and what in flag for flag in found), found


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
        "import collections.abc\n_m = collections.abc.Mapping",
        "from json import decoder as _d\n_e = _d.JSONDecodeError",
        "import re\n_r = re.compile('[a-z]+')",
        "import functools, itertools, unicodedata, types\n_n = types.SimpleNamespace()",
        "_e = errors.IllegalTransitionError",
        "from typing import Final, cast",
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


def criterion_outcome(grader: Grader, key: str) -> tuple[str, str]:
    """(status, message) of one criterion of a grader's tree."""
    outcome = grader.outcome(next(c for c in CRITERIA if c.key == key))
    return outcome.status, outcome.message


def test_strict_scores_zero_the_kit_reached_through_attrgetter(tmp_path: Path) -> None:
    """The issue's route to the kit, with no import of it, passes check 4 only unflagged."""
    code = (
        "import operator, typing\n"
        '_il = operator.attrgetter("sys.modules")(typing)["importlib"]\n'
        '_moves = _il.import_module("labs.lesson.states").LESSON_MOVES\n'
        "ALLOWED = {RunStatus(k): frozenset(RunStatus(t) for t in v) for k, v in _moves.items()}"
    )
    tree = make.with_region_code(tmp_path / "reacher", code) / "starter"
    assert criterion_outcome(Grader(tree, timeout=20.0), "memory-4")[0] == "pass"
    status, message = criterion_outcome(Grader(tree, timeout=20.0, strict=True), "memory-4")
    assert status == "fail" and "uses attrgetter" in message


def test_strict_scores_zero_the_typecheck_of_a_type_error_behind_type_checking(
    tmp_path: Path,
) -> None:
    """mypy skips `if not TYPE_CHECKING:`, so the typecheck passes it unless --strict."""
    folder = make.fixed(tmp_path / "hider")
    hidden = "from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    _hidden: int = 'text'"
    make.add_region_code(folder / "starter", hidden)
    tree = folder / "starter"
    assert criterion_outcome(Grader(tree, timeout=20.0), "typecheck")[0] == "pass"
    status, message = criterion_outcome(Grader(tree, timeout=20.0, strict=True), "typecheck")
    assert status == "fail" and "TYPE_CHECKING" in message
