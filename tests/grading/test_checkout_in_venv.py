"""The kit's checkout inside the grader's virtualenv, graded end to end in every mode (issue 22).

`pip install -e git+URL#egg=mini-koda-lab` clones the kit's repository into
VENV/src/mini-koda-lab and installs it from there, so the interpreter's
virtualenv, which every sandbox is shown, holds the instructors' history
(.git, whose HEAD has solution/), the project's tests, the solution and its
migrations. The layout is made for real, once: a virtualenv that sees the
system's packages (the kit's dependencies), a clone of this repository in its
src/ with this working tree's files on it (the kit graded is the one being
edited), installed from there in editable mode.

That virtualenv's interpreter grades, in each mode this machine offers that
has a sandbox (as root with bubblewrap and without, and as a throwaway
unprivileged user with bubblewrap), the starter beside two hand-ins whose
region code goes for the checkout: one takes the solution's allowlist
wherever it can read it, one fails at import naming all it could read. Run by
the same user with the same interpreter but no sandbox, both succeed, so what
stops them under grading is the sandbox. (As that user without bubblewrap,
grading refuses: tests/grading/test_attacks.py.)
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from labs.sandbox.files import remove_tree
from labs.trees.finding import REPO_ROOT, find_tree
from tests.conftest import IN_CI
from tests.grading import submissions as make
from tests.grading.test_attacks import passing, score
from tests.support.modes import ALL_MODES, Mode, give_to, offered, open_folder, runner

pytestmark = pytest.mark.slow  # a virtualenv and a clone made, then a class graded per mode

NAME = "mini-koda-lab"  # the folder pip's -e git+URL#egg=NAME clones into, under VENV/src/
SECRETS = ".git history migrations solution tests"  # all the peeker names, where it can read
# Where the interpreter it runs in imports the kit from, and its virtualenv.
WHERE = "import labs, sys; print(labs.__file__); print(sys.prefix)"
# The allowlist a tree's shared/states.py leaves (the tree's path in argv), imported unsandboxed.
ALLOWLIST = (
    "import json, sys\n"
    "from labs.trees.finding import find_tree, import_tree\n"
    "tree = find_tree(sys.argv[1])\n"
    "import_tree(tree)\n"
    "allowed = tree.module('shared.states').ALLOWED\n"
    "print(json.dumps({str(k): sorted(map(str, v)) for k, v in allowed.items()}))\n"
)
# The columns of grades.csv that say what a tree's code did: the checks in memory (the
# typecheck reads the code, which in the attacks is new).
CHECKS = [str(n) for n in range(1, 7)]
PEEKED = re.compile(r"peeked: [^;\n]*; kit: [a-z]+(?: [a-z]+)*")


@dataclass(frozen=True)
class Layout:
    """A virtualenv whose src/ holds the kit's checkout, installed from there."""

    venv: Path
    checkout: Path
    installed: str  # how: by pip, or by the path file such an install writes

    @property
    def python(self) -> Path:
        """The virtualenv's interpreter: the one that grades."""
        return self.venv / "bin" / "python"


def git(*args: str) -> str:
    """Run git; its output."""
    done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=300, check=True)
    return done.stdout


def clone_of_this_tree(where: Path) -> Path:
    """A clone of this repository at where: HEAD's history, this working tree's files.

    The files tracked or not ignored are copied over the clone's, and those
    deleted here are deleted there, so the kit under test is the one being
    edited, as in every other test; the history is what the instructors' is.
    """
    git("clone", "-q", str(REPO_ROOT), str(where))
    here = ["-C", str(REPO_ROOT)]
    listed = git(*here, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source, target = REPO_ROOT / name, where / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
    deleted = git(*here, "diff", "-z", "--name-only", "--diff-filter=D", "HEAD")
    for name in filter(None, deleted.split("\0")):
        (where / name).unlink(missing_ok=True)
    return where


def install_editable(python: Path, checkout: Path) -> str:
    """Install checkout in python's virtualenv in editable mode, asking no index; say how.

    By pip (`pip install -e`, what -e git+URL runs after its clone) where the
    virtualenv's setuptools can build the kit, which needs setuptools 77 or
    later; else with the path file such an install writes in setuptools'
    compat mode, the checkout on sys.path. The sandbox sees the same either
    way: the checkout inside the virtualenv, and the kit imported from it.
    """
    pip = ["-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e"]
    done = subprocess.run(
        [str(python), *pip, str(checkout)], capture_output=True, timeout=300, check=False
    )
    if done.returncode == 0:
        return "pip install -e"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    (Path(site) / "__editable__.mini_koda_lab.pth").write_text(f"{checkout}\n", encoding="utf-8")
    return "a path file (pip could not build the kit here without an index)"


@pytest.fixture(scope="module")
def layout() -> Iterator[Layout]:
    """The layout `pip install -e git+URL#egg=mini-koda-lab` makes, in a folder any user reads."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: no checkout to clone")
    scratch = open_folder("lab-venv-layout-")
    try:
        venv = scratch / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
            capture_output=True,
            timeout=300,
            check=True,
        )
        checkout = clone_of_this_tree(venv / "src" / NAME)
        git("-C", str(checkout), "cat-file", "-e", "HEAD:solution/shared/states.py")
        made = Layout(venv, checkout, install_editable(venv / "bin" / "python", checkout))
        dependencies = subprocess.run(
            [str(made.python), "-c", "import alembic, flask, psycopg2, sqlmodel"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if dependencies.returncode != 0:
            why = f"a virtualenv made from {sys.executable} lacks the kit's dependencies"
            if IN_CI:
                pytest.fail(f"{why}: {dependencies.stderr[-1000:]}")
            pytest.skip(why)
        yield made
    finally:
        remove_tree(scratch)


def hand_in(folder: Path, code: str = "") -> Path:
    """The starter, with code at the end of check 4's region. No migration: the checks on
    Postgres would run the same code in sandboxes made the same way, at twice the time."""
    if code:
        make.with_region_code(folder, code)
    else:
        make.starter_copy(folder)
    return folder


def hand_ins(checkout: Path) -> dict[str, Callable[[Path], object]]:
    """The class: the starter, and the two attacks on checkout."""
    return {
        "ben": hand_in,
        "copier": lambda f: hand_in(f, make.copying_from_checkout(checkout)),
        "peeker": lambda f: hand_in(f, make.peeking_into_checkout(checkout)),
    }


@dataclass
class Graded:
    """One mode's run: the attacks unsandboxed, then the class graded, by the same user."""

    mode: Mode
    layout: Layout
    where: list[str]  # where the grader's interpreter imports the kit from, and its sys.prefix
    peeked: str  # what the peeker said, run unsandboxed
    allowlist: subprocess.CompletedProcess[str]  # the copier's tree imported unsandboxed
    grading: subprocess.CompletedProcess[str]
    rows: dict[str, dict[str, str]]

    def row(self, name: str) -> dict[str, str]:
        """One hand-in's row of grades.csv (having checked grading went through)."""
        said = self.grading.stdout[-3000:] + self.grading.stderr[-3000:]
        assert self.grading.returncode == 0, said
        assert name in self.rows, said
        return self.rows[name]


def read_rows(csv_file: Path) -> dict[str, dict[str, str]]:
    """grades.csv's rows by submission (none when it was not written)."""
    if not csv_file.is_file():
        return {}
    with csv_file.open(encoding="utf-8-sig", newline="") as table:
        return {row["submission"]: row for row in csv.DictReader(table)}


MODES = [
    pytest.param(m, id=m.name, marks=pytest.mark.skipif(bool(offered(m)), reason=offered(m)))
    for m in ALL_MODES
    if m.root or m.bwrap  # the modes with a sandbox
]


@pytest.fixture(scope="module", params=MODES)
def graded(request: pytest.FixtureRequest, layout: Layout) -> Iterator[Graded]:
    """The attacks run unsandboxed, then the class graded by the virtualenv's `labs grade`,
    as one mode's user, from a folder outside the checkout."""
    mode: Mode = request.param
    with runner(mode) as run:
        root = open_folder("lab-venv-class-")
        try:
            (root / "class").mkdir()
            folders = []
            for name, build in hand_ins(layout.checkout).items():
                build(root / "class" / name)
                folders.append(root / "class" / name)
            out = root / "out"
            give_to(root, run.uid)

            def python(*args: str) -> subprocess.CompletedProcess[str]:
                # PYTHONPATH empty: the kit is the virtualenv's, never this checkout's.
                return run.run([str(layout.python), *args], env={"PYTHONPATH": ""}, timeout=600)

            where = python("-c", WHERE)
            peeked = python("-c", make.peeking_into_checkout(layout.checkout))
            allowlist = python("-c", ALLOWLIST, str(root / "class" / "copier" / "starter"))
            options = ["--out", str(out), "--timeout", "10"]
            options += ["--require-bwrap"] if mode.bwrap else []
            grading = python("-m", "labs", "grade", *map(str, folders), *options)
            found = PEEKED.search(peeked.stderr)
            yield Graded(
                mode,
                layout,
                where.stdout.split(),
                found.group(0) if found else peeked.stderr[-2000:],
                allowlist,
                grading,
                read_rows(out / "grades.csv"),
            )
        finally:
            remove_tree(root)


def test_the_grader_runs_the_kit_from_the_checkout_in_its_virtualenv(graded: Graded) -> None:
    """The layout is the issue's: the grading interpreter is the virtualenv's, the kit it imports
    is the checkout's in VENV/src/, and grading names the mode it was run in."""
    layout = graded.layout
    assert graded.where == [str(layout.checkout / "labs" / "__init__.py"), str(layout.venv)], (
        layout.installed
    )
    assert layout.checkout.parent == layout.venv / "src"
    expected = "bwrap" if graded.mode.bwrap else "uid"
    assert f"sandbox mode {expected}:" in graded.grading.stdout + graded.grading.stderr


def test_without_the_sandbox_the_attacks_take_the_answers(graded: Graded) -> None:
    """Run by the grading user with the grading interpreter, unsandboxed, the peeker reads the
    history, .git, the solution, its migrations and the tests, and the copier takes the
    solution's allowlist: so each attack failing under grading is the sandbox's doing."""
    assert graded.peeked == f"peeked: {SECRETS}; kit: labs starter"
    solution = find_tree("solution").module("shared.states").ALLOWED
    taken = {str(k): sorted(map(str, v)) for k, v in solution.items()}
    assert graded.allowlist.returncode == 0, graded.allowlist.stderr[-2000:]
    assert json.loads(graded.allowlist.stdout) == taken


def test_nothing_of_the_checkout_but_the_kit_is_in_sight(graded: Graded) -> None:
    """Graded, the region code reads none of the checkout's history, .git, solution, migrations
    of the solution or tests, by git or by path; the kit (labs/, starter/) it still reads."""
    found = graded.row("peeker")
    said = PEEKED.findall(found["note"])
    assert said and set(said) == {"peeked: nothing; kit: labs starter"}, found["note"]


def test_the_answers_in_the_checkout_earn_nothing(graded: Graded) -> None:
    """The copier, which takes check 4's allowlist from the checkout wherever it can read it,
    is graded as the starter it is: every check as the starter's; its score no more (its own
    region code may fail the typecheck)."""
    found, ben = graded.row("copier"), graded.row("ben")
    assert 4 not in passing(found), found["note"]
    assert {c: found[c] for c in CHECKS} == {c: ben[c] for c in CHECKS}, found["note"]
    assert score(found) <= score(ben)
