"""The typecheck reads the spliced tree with the kit's settings: nothing handed in steers it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from labs.grading import typecheck
from labs.grading.criteria import CRITERIA
from labs.grading.edits import edits_outside_regions
from labs.grading.grader import Grader
from labs.grading.splice import splice
from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT
from labs.trees.typechecking import mypy_command
from tests.grading import submissions as make
from tests.support.modes import ALL_MODES, Mode, offered, open_folder, runner

TYPECHECK = next(c for c in CRITERIA if c.kind == "typecheck")
USER = next(m for m in ALL_MODES if m.name == "user-bwrap")

# Run as the unprivileged user: the baseline's two places are the arguments.
BASELINE_AS_USER = """
import sys
from pathlib import Path
from labs.grading import typecheck
places = [Path(sys.argv[1]) / "baseline", Path(sys.argv[2]) / "baseline"]
typecheck.baseline_places = lambda: places
print(typecheck.baseline_cache())
"""


def test_the_grading_typecheck_reads_the_settings_labs_typecheck_reads(tmp_path: Path) -> None:
    """Grading and `python -m labs typecheck` run one mypy command line, with the kit's settings
    (labs/mypy.toml, which tests/project/test_installs.py keeps equal to pyproject.toml's)."""
    command = mypy_command([tmp_path / "starter"], tmp_path / "cache")
    assert command[command.index("--config-file") + 1] == str(REPO_ROOT / "labs" / "mypy.toml")
    assert command[command.index("--cache-dir") + 1] == str(tmp_path / "cache")
    assert command[-1] == str(tmp_path / "starter")


def test_a_stub_beside_a_module_is_an_edit_and_hides_nothing(tmp_path: Path, mode: Mode) -> None:
    """keys.pyi over a keys.py with a type error: listed as a new file, the typecheck fails."""
    tree = make.with_stub_hiding_errors(tmp_path / "eve") / "starter"
    assert "shared/keys.pyi:1: a new file" in edits_outside_regions(tree)
    outcome = Grader(tree).outcome(TYPECHECK)
    assert outcome.status == "fail" and "keys.py" in outcome.output


def test_a_mypy_line_in_a_region_is_not_read_and_the_errors_count(
    tmp_path: Path, mode: Mode
) -> None:
    """`# mypy: ignore-errors` at column 0 in a region: mypy still reports the region's errors."""
    tree = make.with_silenced_typecheck(tmp_path / "sly") / "starter"
    grader = Grader(tree)
    outcome = grader.outcome(TYPECHECK)
    assert outcome.status == "fail" and "states.py" in outcome.output
    spliced = (grader.graded_tree / "shared" / "states.py").read_text(encoding="utf-8")
    assert "\n# mypy:" not in spliced


def test_settings_files_and_stubs_of_the_hand_in_never_reach_the_spliced_tree(
    tmp_path: Path,
) -> None:
    """setup.cfg, mypy.ini, py.typed, stubs and a `migrations/` folder inside the tree are left
    out of the spliced tree, and each is named as a new file."""
    tree = make.fixed(tmp_path / "max") / "starter"
    for name in ("setup.cfg", "mypy.ini", "py.typed", "shared/keys.pyi"):
        (tree / name).write_text("[mypy]\nignore_errors = True\n", encoding="utf-8")
    (tree / "migrations").mkdir()
    (tree / "migrations" / "env.py").write_text("", encoding="utf-8")
    (tree / "migrations" / "flask.pyi").write_text("", encoding="utf-8")
    spliced = tmp_path / "spliced"
    splice(tree, spliced)
    left_out = ["setup.cfg", "mypy.ini", "py.typed", "shared/keys.pyi"]
    left_out += ["migrations/flask.pyi", "migrations/env.py"]
    for name in left_out:
        assert not (spliced / name).exists(), name
    assert not (spliced / "migrations").exists()
    edits = edits_outside_regions(tree)
    assert {f"{n}:1: a new file" for n in left_out} <= set(edits)


def test_a_mistyped_tree_fails_and_a_clean_one_passes(tmp_path: Path, mode: Mode) -> None:
    """The rule both ways: the solved tree typechecks; one wrong annotation in a region fails."""
    clean = make.fixed(tmp_path / "ada") / "starter"
    wrong = make.fixed(tmp_path / "ben") / "starter"
    make.replace_in(
        wrong / "shared" / "keys.py",
        r"(    # SOLUTION\(check 3\)[^\n]*\n|    # TODO\(check 3\)[^\n]*\n)",
        r'\1    wrong: int = "text"\n',
    )
    assert Grader(clean).outcome(TYPECHECK).status == "pass"
    failed = Grader(wrong).outcome(TYPECHECK)
    assert failed.status == "fail" and "keys.py" in failed.output


@pytest.mark.skipif(bool(offered(USER)), reason=offered(USER))
def test_a_grader_shut_out_of_the_kits_cache_keeps_a_baseline_of_its_own(tmp_path: Path) -> None:
    """Root graded first under umask 077 (a .mypy_cache of mode 0700): the user builds in its own.

    Before, the unprivileged grader's stat of the kit's place raised, and
    every submission it graded read "grading failed: PermissionError".
    """
    shut = tmp_path / "kit-cache"
    shut.mkdir(mode=0o700)
    (shut / "baseline").mkdir(mode=0o700)
    with runner(USER) as run:
        own = open_folder("lab-own-cache-", owner=run.uid)
        try:
            done = run.python("-c", BASELINE_AS_USER, str(shut), str(own), timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            assert done.stdout.strip() == str(own / "baseline")
            kept = own / "baseline" / "3.11"  # mypy's cache for the trees' Python
            assert kept.is_dir() and any(kept.iterdir()), "the baseline holds no cache"
            assert os.listdir(shut / "baseline") == []  # nothing written where it may not be
        finally:
            remove_tree(own)


def test_a_baseline_is_kept_for_the_kit_it_was_built_from(tmp_path: Path) -> None:
    """Editing, adding or removing a kit module makes another key (a new baseline); nothing
    else does. A stale baseline made mypy recheck the whole kit for every submission."""
    kit = tmp_path / "labs"
    (kit / "grading").mkdir(parents=True)
    (kit / "__init__.py").write_text("", encoding="utf-8")
    (kit / "grading" / "a.py").write_text("x = 1\n", encoding="utf-8")
    first = typecheck.baseline_key(tmp_path)
    assert typecheck.baseline_key(tmp_path) == first
    (tmp_path / "notes.txt").write_text("not the kit", encoding="utf-8")
    assert typecheck.baseline_key(tmp_path) == first
    (kit / "grading" / "a.py").write_text("x = 2\n", encoding="utf-8")
    edited = typecheck.baseline_key(tmp_path)
    (kit / "b.py").write_text("", encoding="utf-8")
    added = typecheck.baseline_key(tmp_path)
    assert len({first, edited, added}) == 3
    assert all(
        typecheck.baseline_key(REPO_ROOT) in str(place) for place in typecheck.baseline_places()
    )
