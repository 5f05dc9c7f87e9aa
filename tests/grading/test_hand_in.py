"""Taking a hand-in in: the tree graded by its name, junk left out and named.

Fast: hand-ins here are skeleton trees (a folder with `__init__.py` and the
subpackages' folders), sparse files and small zips, taken in and chosen from
without grading. Whole classes graded through `labs grade` are in
test_batch.py.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from labs.commands.cli import build_parser
from labs.grading import hand_in
from labs.grading.errors import BrokenSubmissionError, GradingRefusedError
from labs.grading.hand_in import MAX_BYTES, take_in
from labs.grading.left_out import LARGE_FILE
from labs.grading.on_postgres_roles import SAFE_CREATEROLE, refuse_without_privileges
from labs.grading.tree_choice import Chosen, choose_tree
from labs.sandbox.limits import MiB
from labs.trees.finding import SUBPACKAGES

PACKINGS = ["folder", "zip"]


def lab_tree(folder: Path) -> Path:
    """A skeleton lab tree: what taking in and the choice of tree look for."""
    for sub in SUBPACKAGES:
        (folder / sub).mkdir(parents=True)
        (folder / sub / "__init__.py").write_text("", encoding="utf-8")
    (folder / "__init__.py").write_text("", encoding="utf-8")
    return folder


def hand_in_of(tmp_path: Path, trees: list[str], files: dict[str, int], packing: str) -> Path:
    """A hand-in holding skeleton trees at these paths and files of these sizes, as asked.

    In a folder the files are sparse (made with truncate, so 100 MB costs
    nothing); in a zip they are zeros, deflated.
    """
    folder = tmp_path / "hand-in"
    for tree in trees:
        lab_tree(folder / tree)
    if packing == "folder":
        for name, size in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            with (folder / name).open("wb") as file:
                file.truncate(size)
        return folder
    archive = tmp_path / "hand-in.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                out.write(path, path.relative_to(folder).as_posix())
        for name, size in files.items():
            with out.open(name, "w", force_zip64=True) as entry:
                for start in range(0, size, 8 * MiB):
                    entry.write(bytes(min(8 * MiB, size - start)))
    return archive


def taken(tmp_path: Path, hand_in: Path) -> tuple[Path, list[str], str]:
    """Take a hand-in in: the copy's top, its files (relative, sorted), and its notes."""
    intake = take_in(hand_in, tmp_path / "scratch")
    files = sorted(
        p.relative_to(intake.root).as_posix() for p in intake.root.rglob("*") if p.is_file()
    )
    return intake.root, files, " ".join(intake.notes())


# Every kind of folder that is not the lesson's, where it is put, and a file it holds.
JUNK_FOLDERS = {
    "venv": ("venv", "pyvenv.cfg"),
    ".venv": (".venv", "pyvenv.cfg"),
    "a virtualenv of another name": ("tools/py", "pyvenv.cfg"),
    "node_modules": ("node_modules", "index.js"),
    ".git": (".git", "HEAD"),
    ".hg": (".hg", "store"),
    ".svn": (".svn", "entries"),
    "__MACOSX": ("__MACOSX/starter", "._keys.py"),
}
CACHES = ["__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"]


@pytest.mark.parametrize("packing", PACKINGS)
@pytest.mark.parametrize(("folder", "marker"), JUNK_FOLDERS.values(), ids=list(JUNK_FOLDERS))
def test_a_folder_that_is_not_the_lessons_is_left_out_and_named(
    tmp_path: Path, packing: str, folder: str, marker: str
) -> None:
    """Virtualenvs (by name or by pyvenv.cfg), node_modules, VCS, __MACOSX: never copied, named."""
    files = {f"{folder}/{marker}": 10, f"{folder}/lib/site.py": 10, f"{folder}/lib/x/y.txt": 1}
    root, copied, notes = taken(tmp_path, hand_in_of(tmp_path, ["starter"], files, packing))
    top = folder.split("/")[0] if folder.startswith("__MACOSX") else folder
    assert not [f for f in copied if f.startswith(top + "/")]
    assert f"{top}/ (" in notes
    assert "starter/__init__.py" in copied
    assert choose_tree(root).tree == root / "starter"


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """The caps on files and folders, made small: hand-ins past them are quick to make."""
    monkeypatch.setattr(hand_in, "MAX_FILES", 40)
    monkeypatch.setattr(hand_in, "MAX_DIRS", 20)
    return hand_in.MAX_FILES, hand_in.MAX_DIRS


@pytest.mark.parametrize("packing", PACKINGS)
def test_what_is_left_out_is_not_counted_against_the_caps(
    tmp_path: Path, packing: str, small_caps: tuple[int, int]
) -> None:
    """A virtualenv of more files and folders than the caps allow, and a node_modules: graded."""
    max_files, max_dirs = small_caps
    files = {"venv/pyvenv.cfg": 10, "node_modules/index.js": 10}
    files |= {f"venv/lib/p{n % (max_dirs + 1)}/f{n}.py": 1 for n in range(max_files + 1)}
    root, copied, notes = taken(tmp_path, hand_in_of(tmp_path, ["starter"], files, packing))
    assert not [f for f in copied if f.startswith(("venv/", "node_modules/"))]
    assert "venv/ (virtualenv)" in notes and "node_modules/ (node packages)" in notes
    assert choose_tree(root).tree == root / "starter"


@pytest.mark.parametrize("packing", PACKINGS)
@pytest.mark.parametrize("cache", CACHES)
def test_caches_are_left_out_without_a_note(tmp_path: Path, packing: str, cache: str) -> None:
    """Caches in the tree and beside it: not copied, not counted, and no note on every row."""
    files = {f"starter/shared/{cache}/f.bin": 1, f"{cache}/x/y": 1, "starter/shared/keys.pyc": 1}
    root, copied, notes = taken(tmp_path, hand_in_of(tmp_path, ["starter"], files, packing))
    assert not [f for f in copied if cache in f or f.endswith(".pyc")]
    assert notes == ""
    assert choose_tree(root).tree == root / "starter"


@pytest.mark.parametrize("packing", PACKINGS)
@pytest.mark.parametrize("name", ["debug.log", "starter/data.csv", "core", "notes/screen.png"])
def test_a_large_file_that_is_not_python_is_left_out_with_its_size(
    tmp_path: Path, packing: str, name: str
) -> None:
    """Past LARGE_FILE a file that is not Python is never copied (nor unpacked): named, sized."""
    size = MAX_BYTES + MiB if packing == "zip" else 100 * MiB
    hand_in = hand_in_of(tmp_path, ["starter"], {name: size, "small.txt": LARGE_FILE}, packing)
    _, files, notes = taken(tmp_path, hand_in)
    assert name not in files and "small.txt" in files
    assert f"{name} ({size // MiB} MB)" in notes


@pytest.mark.parametrize("packing", PACKINGS)
def test_past_the_size_cap_once_junk_is_left_out_the_largest_paths_are_named(
    tmp_path: Path, packing: str
) -> None:
    """Python past 64 MB refuses the hand-in, naming its three largest files, largest first."""
    files = {"starter/big.py": 30 * MiB, "gen/b.py": 25 * MiB, "gen/c.pyi": 20 * MiB}
    files |= {"gen/d.py": 2 * MiB, "venv/pyvenv.cfg": 1, "dump.log": 100 * MiB}
    with pytest.raises(BrokenSubmissionError) as refused:
        take_in(hand_in_of(tmp_path, ["starter"], files, packing), tmp_path / "scratch")
    message = str(refused.value)
    assert message.startswith("could not grade: more than 64 MB")
    assert "the largest: starter/big.py (30 MB), gen/b.py (25 MB), gen/c.pyi (20 MB)" in message
    assert "gen/d.py" not in message and "dump.log" not in message


@pytest.mark.parametrize("packing", PACKINGS)
def test_past_the_file_cap_once_junk_is_left_out_the_crowded_folder_is_named(
    tmp_path: Path, packing: str, small_caps: tuple[int, int]
) -> None:
    """More files kept than the cap refuse the hand-in, naming the folders most of them are in."""
    max_files, _ = small_caps
    files = {f"starter/generated/m{n}.py": 1 for n in range(max_files - 5)}
    files |= {f"starter/shared/s{n}.py": 1 for n in range(10)}
    files |= {f"node_modules/x{n}.js": 1 for n in range(50)}
    with pytest.raises(BrokenSubmissionError) as refused:
        take_in(hand_in_of(tmp_path, ["starter"], files, packing), tmp_path / "scratch")
    assert f"more than {max_files} files" in str(refused.value)
    assert "most are in starter/generated (35 files), starter/shared (" in str(refused.value)


NEIGHBOURS = ["old_starter", "a_backup", "starter_old", "Starter", "zz"]


@pytest.mark.parametrize("neighbour", NEIGHBOURS)
def test_the_tree_named_starter_is_graded_whatever_its_neighbour_is_called(
    tmp_path: Path, neighbour: str
) -> None:
    """Two trees at the same depth: starter/ is graded, never the first by the alphabet."""
    lab_tree(tmp_path / "starter")
    lab_tree(tmp_path / neighbour)
    chosen = choose_tree(tmp_path)
    assert chosen.tree == tmp_path / "starter"
    assert chosen.notes == [
        "graded starter/",
        f"other lab trees in the hand-in, not graded: {neighbour}/",
    ]


@pytest.mark.parametrize("copy", ["starter/backup/starter", "backup/starter", "a/b/starter"])
def test_a_deeper_copy_of_starter_is_named_and_the_shallowest_graded(
    tmp_path: Path, copy: str
) -> None:
    """A nested copy, inside the tree or beside it, is not graded; the note names it."""
    lab_tree(tmp_path / "work" / "starter")
    lab_tree(tmp_path / "work" / copy)
    chosen = choose_tree(tmp_path)
    assert chosen.tree == tmp_path / "work" / "starter"
    assert f"not graded: work/{copy}/" in " ".join(chosen.notes)


@pytest.mark.parametrize("solution", ["solution", "Solution", "lab/solution"])
def test_a_solution_is_never_graded(tmp_path: Path, solution: str) -> None:
    """Beside a starter, the starter is graded; beside another tree, that tree; alone, refused."""
    lab_tree(tmp_path / "alone" / solution)
    with pytest.raises(BrokenSubmissionError, match="a solution is never graded"):
        choose_tree(tmp_path / "alone")
    for other in ("starter", "mine"):
        lab_tree(tmp_path / other / solution)
        lab_tree(tmp_path / other / other)
        chosen = choose_tree(tmp_path / other)
        assert chosen.tree == tmp_path / other / other
        assert f"not graded: {solution}/" in " ".join(chosen.notes)


def test_a_hand_in_that_is_a_solution_at_its_top_is_refused(tmp_path: Path) -> None:
    """solution.zip holding the tree's own files: its name is the hand-in's, and refused."""
    lab_tree(tmp_path / "submission")
    with pytest.raises(BrokenSubmissionError, match="a solution is never graded"):
        choose_tree(tmp_path / "submission", top_name="solution")


@pytest.mark.parametrize("name", ["mywork", "starter-final", "lab8"])
def test_without_starter_the_one_other_tree_is_graded_and_the_note_says_so(
    tmp_path: Path, name: str
) -> None:
    """No starter/ but one tree: graded, and the note says which instead.

    A hand-in that is the tree itself (a zip of starter/'s contents) is graded
    as it is: it holds no other folder the note could have meant.
    """
    lab_tree(tmp_path / "hand-in" / name)
    chosen = choose_tree(tmp_path / "hand-in")
    assert chosen.tree == tmp_path / "hand-in" / name
    assert chosen.notes == [f"no starter/ in the hand-in: graded {name}/ instead"]
    itself = choose_tree(tmp_path / "hand-in" / name, top_name=name)
    assert itself == Chosen(tmp_path / "hand-in" / name, [])


@pytest.mark.parametrize(
    ("trees", "named"),
    [(["mine", "mine_backup"], "2 lab trees at the same depth"), (["a/starter", "b/starter"], "")],
)
def test_two_trees_at_the_same_depth_none_told_apart_by_name_are_refused(
    tmp_path: Path, trees: list[str], named: str
) -> None:
    """Neither is graded by the alphabet: the hand-in is refused, naming both."""
    for tree in trees:
        lab_tree(tmp_path / tree)
    with pytest.raises(BrokenSubmissionError) as refused:
        choose_tree(tmp_path)
    assert all(f"{tree}/" in str(refused.value) for tree in trees)
    assert named in str(refused.value)


def test_the_name_the_instructor_gives_is_the_tree_graded(tmp_path: Path) -> None:
    """--tree lab8: lab8/ is graded, the starter beside it is named."""
    lab_tree(tmp_path / "starter")
    lab_tree(tmp_path / "lab8")
    chosen = choose_tree(tmp_path, wanted="lab8")
    assert chosen.tree == tmp_path / "lab8"
    assert "not graded: starter/" in " ".join(chosen.notes)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("solution", "the solution is never graded"),
        ("SOLUTION", "the solution is never graded"),
        ("", "is not a folder name"),
        ("..", "is not a folder name"),
        ("a/starter", "is not a folder name"),
    ],
)
def test_grade_refuses_a_tree_name_that_is_no_folder_or_the_solution(
    name: str, why: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """labs grade --tree takes one folder name, and never the solution's: a usage error."""
    argv = ["grade", "--tree", name, "hand-in"]
    with pytest.raises(SystemExit) as stopped:
        build_parser(argv).parse_args(argv)
    assert stopped.value.code == 2
    assert why in capsys.readouterr().err


class ServerSays:
    """A cursor answering what the server says about the grader's role, on a given version.

    The role may do everything grading needs but what superuser and
    createrole say: on the database it has CREATE and CONNECT with the grant
    option, as the database's owner has.
    """

    def __init__(self, version: int, superuser: bool, createrole: bool) -> None:
        self.version, self.superuser, self.createrole = version, superuser, createrole

    def execute(self, query: str, *_: Any) -> None:
        """Take the one question asked: the role's privileges."""

    def fetchone(self) -> tuple[Any, ...]:
        """The role's privileges (a database per hand-in: CREATEDB, which it has) and the
        server's version."""
        return ("teacher", self.superuser, True, self.createrole, self.version)


@pytest.mark.parametrize("version", [90624, 130014, 150008, SAFE_CREATEROLE, 170002])
@pytest.mark.parametrize("superuser", [False, True])
@pytest.mark.parametrize("createrole", [False, True])
def test_up_to_postgres_15_createrole_is_never_what_the_class_is_told_to_grant(
    version: int, superuser: bool, createrole: bool
) -> None:
    """A role that could grade only with CREATEROLE: on 15 or older, told what is safe instead.

    That is the grader's own cluster, or a superuser on a server kept for grading. On
    16 and later, where CREATEROLE reaches only the roles its holder made, the
    one command that grants it. A superuser, or a role that has it, may grade.
    """
    server = ServerSays(version, superuser, createrole)
    if superuser or createrole:
        refuse_without_privileges(server, roles=True)
        return
    with pytest.raises(GradingRefusedError) as refused:
        refuse_without_privileges(server, roles=True)
    advice = str(refused.value)
    if version >= SAFE_CREATEROLE:
        assert "`ALTER ROLE teacher CREATEROLE;`" in advice
        return
    assert "ALTER ROLE" not in advice and "GRANT" not in advice
    assert "superuser of a server kept for grading" in advice
    assert "cluster of the grader's own" in advice
    assert f"PostgreSQL {version // 10000}" in advice
