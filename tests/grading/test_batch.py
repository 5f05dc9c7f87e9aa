"""Grading a class: every kind of hand-in gets the score it earned, none stops the batch."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import psycopg2
import pytest

from labs.grading import on_postgres_throwaway
from labs.grading.batch import grade_all, trouble
from labs.grading.class_database import check_class_database
from labs.grading.criteria import MEMORY_POINTS, MIGRATION_POINTS, Grade, Outcome, Trouble
from labs.grading.errors import GradingRefusedError
from labs.grading.hand_in import MAX_FILES
from labs.grading.on_postgres_roles import SAFE_CREATEROLE
from labs.pg.cluster import TempCluster, free_port
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree
from tests.grading import submissions as make
from tests.grading.conftest import TIMEOUT
from tests.grading.postgres_help import grading_leftovers
from tests.support.stock_servers import started, superuser, until_accepted

pytestmark = pytest.mark.slow  # whole classes through labs grade


def memory_results(grade: Grade) -> dict[int, str]:
    """pass/fail of the six checks on memory."""
    return {n: grade.outcomes[f"memory-{n}"].status for n in range(1, 7)}


def passing(*checks: int) -> dict[int, str]:
    """The six checks' results when exactly these pass."""
    return {n: "pass" if n in checks else "fail" for n in range(1, 7)}


def hand_ins(batch_folder: Path) -> list[str]:
    """Two of conftest's hand-ins: one without a migration, one with."""
    return [str(batch_folder / "ben"), str(batch_folder / "ada.zip")]


def test_the_solution_zip_earns_every_memory_point_and_the_migration(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """A starter with every region solved, zipped with its migration, earns all it can."""
    grade = batch["ada"]
    assert memory_results(grade) == passing(1, 2, 3, 4, 5, 6)
    assert grade.score == 6 * MEMORY_POINTS + MIGRATION_POINTS + typecheck_points["solution"]


def test_the_untouched_starter_earns_checks_1_2_and_6(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """The starter as shipped passes 1, 2 and 6, and has no migration of its own."""
    grade = batch["ben"]
    assert memory_results(grade) == passing(1, 2, 6)
    assert grade.outcomes["migration"].status == "fail"
    assert grade.score == 3 * MEMORY_POINTS + typecheck_points["starter"]
    assert grade.broken == ""


def test_a_half_fixed_starter_earns_the_check_it_fixed(
    batch: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """Only check 4's region solved: 1, 2, 4 and 6 pass."""
    grade = batch["cho"]
    assert memory_results(grade) == passing(1, 2, 4, 6)
    assert grade.score == 4 * MEMORY_POINTS + typecheck_points["starter"]


def test_a_syntax_error_scores_zero_and_says_so(batch: dict[str, Grade]) -> None:
    """A tree that does not parse fails everything, with the SyntaxError as the note."""
    grade = batch["dev"]
    assert grade.score == 0
    assert "SyntaxError" in grade.broken and "keys.py" in grade.broken


def test_an_endless_loop_at_import_times_out_once(batch: dict[str, Grade]) -> None:
    """A tree that never finishes importing fails the six checks as timed out."""
    grade = batch["eli"]
    assert memory_results(grade) == passing()
    assert "did not finish importing" in grade.broken


def test_an_endless_loop_in_one_check_costs_only_that_check(batch: dict[str, Grade]) -> None:
    """A transition that never returns fails check 4 as timed out; the others are graded."""
    grade = batch["fay"]
    assert memory_results(grade) == passing(1, 2, 6)
    assert "still running after 10 s" in grade.outcomes["memory-4"].message
    assert "timed out" in grade.broken


def test_why_the_checks_failed_is_the_drivers_verdict_never_their_words() -> None:
    """Failures that only say "still running after" or "did not finish importing" (words a
    tree can print) are no reason; the verdict the checks' runner gave is."""
    words = Outcome("fail", "got: still running after 10 s; it did not finish importing")
    stopped = Outcome("fail", "got: still running after 10 s", trouble=Trouble.TIMED_OUT)
    unrun = Outcome("fail", "the checks could not run: x", ran=False, trouble=Trouble.COULD_NOT_RUN)

    def grade_of(*outcomes: Outcome) -> Grade:
        return Grade("x", {f"memory-{n}": o for n, o in enumerate(outcomes, start=1)})

    assert trouble(grade_of(*[words] * 6)) == ""
    assert trouble(grade_of(stopped, *[words] * 5)) == "some checks timed out (an endless loop?)"
    assert trouble(grade_of(*[unrun] * 6)) == "the checks could not run: x"


def test_a_deleted_file_scores_zero_and_names_the_module(batch: dict[str, Grade]) -> None:
    """Without shared/keys.py the tree does not import; the note names what is missing."""
    grade = batch["gus"]
    assert grade.score == 0
    assert "shared.keys" in grade.broken
    assert "labtree_" not in grade.broken


def test_a_zip_that_does_not_unpack_is_reported(batch: dict[str, Grade]) -> None:
    """A cut-short upload scores zero with the reason, and the same max as the others."""
    grade = batch["hal"]
    assert grade.score == 0
    assert "does not unpack" in grade.broken
    assert grade.max_score == batch["ben"].max_score


def test_the_grade_command_prints_a_row_each_and_writes_csv_and_markdown(
    batch_folder: Path, tmp_path: Path
) -> None:
    """python -m labs grade exits 0 with one row per submission, even with broken ones."""
    sources = [str(batch_folder / name) for name in ("ben", "dev", "hal.zip")]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "labs",
            "grade",
            "--out",
            str(tmp_path),
            "--timeout",
            "10",
            *sources,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout.splitlines()
    assert [line.split()[0] for line in table[1:4]] == ["ben", "dev", "hal"]
    with (tmp_path / "grades.csv").open(encoding="utf-8-sig") as rows:
        graded = {row["submission"]: row for row in csv.DictReader(rows)}
    assert graded["ben"]["6"] == "pass" and graded["ben"]["3"] == "fail"
    assert graded["hal"]["score"] == "0"
    assert "| ben |" in (tmp_path / "grades.md").read_text(encoding="utf-8")


# The class intake must grade as each deserves: a hand-in with two trees, one with the course's
# solution, junk in a folder and in a zip, a renamed tree, and those intake must refuse.


def with_junk(folder: Path) -> Path:
    """A 100 MB log (sparse) and a virtualenv beside the tree, as a learner's folder holds them."""
    with (folder / "debug.log").open("wb") as log:
        log.truncate(100 * 1024 * 1024)
    site = folder / "venv" / "lib" / "python3.11" / "site-packages" / "flask"
    site.mkdir(parents=True)
    (folder / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (site / "__init__.py").write_text("", encoding="utf-8")
    return folder


def zipped_with_junk(build: Path, archive: Path) -> Path:
    """The hand-in zipped with a .venv/ and a node_modules/ of more files than intake's cap."""
    make.zipped(build, archive)
    with zipfile.ZipFile(archive, "a") as out:
        out.writestr(".venv/pyvenv.cfg", "home = /usr/bin\n")
        out.writestr(".venv/lib/python3.11/site-packages/six.py", "")
        for number in range(MAX_FILES + 1):
            out.writestr(f"node_modules/p{number % 40}/index{number}.js", "")
    return archive


@pytest.fixture(scope="module")
def intake_class(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Grade]:
    """A class of hand-ins that intake used to zero or misgrade, graded by grade_all."""
    root = tmp_path_factory.mktemp("intake-class")
    two = make.fixed(root / "two-trees")
    copy_tree(tree_root("starter"), two / "old_starter")
    with_solution = make.starter_copy(root / "with-solution").parent
    copy_tree(tree_root("solution"), with_solution / "solution")
    with_junk(make.fixed(root / "junk"))
    zipped_with_junk(make.fixed(root / "build" / "junk"), root / "junk-zip.zip")
    (make.fixed(root / "mywork") / "starter").rename(root / "mywork" / "mywork")
    (root / "only-solution").mkdir()
    copy_tree(tree_root("solution"), root / "only-solution" / "solution")
    big = make.starter_copy(root / "too-big") / "generated"
    big.mkdir()
    for name, megabytes in (("big.py", 70), ("data.py", 5)):
        with (big / name).open("wb") as file:
            file.truncate(megabytes * 1024 * 1024)
    names = [
        "two-trees",
        "with-solution",
        "junk",
        "junk-zip.zip",
        "mywork",
        "only-solution",
        "too-big",
    ]
    grades = grade_all([root / name for name in names], timeout=TIMEOUT, database_url=None)
    return {grade.submission: grade for grade in grades}


def test_of_two_trees_at_the_same_depth_the_starter_is_graded_and_the_other_named(
    intake_class: dict[str, Grade], typecheck_points: dict[str, int]
) -> None:
    """A solved starter/ beside an untouched old_starter/ (first by the alphabet): full marks."""
    grade = intake_class["two-trees"]
    assert memory_results(grade) == passing(1, 2, 3, 4, 5, 6)
    assert grade.score == 6 * MEMORY_POINTS + typecheck_points["solution"]
    assert "graded starter/; other lab trees in the hand-in, not graded: old_starter/" in grade.note


def test_a_hand_in_holding_the_solution_is_graded_on_its_starter(
    intake_class: dict[str, Grade],
) -> None:
    """The untouched starter beside a copy of solution/: graded as the starter it is."""
    grade = intake_class["with-solution"]
    assert memory_results(grade) == passing(1, 2, 6)
    assert "not graded: solution/" in grade.note


@pytest.mark.parametrize(
    ("name", "left_out"),
    [
        ("junk", ["debug.log (100 MB)", "venv/ (virtualenv)"]),
        ("junk-zip", [".venv/ (virtualenv)", "node_modules/ (node packages)"]),
    ],
)
def test_junk_beside_the_tree_is_left_out_named_and_the_tree_graded_as_it_deserves(
    intake_class: dict[str, Grade], typecheck_points: dict[str, int], name: str, left_out: list[str]
) -> None:
    """A 100 MB log and a venv/ in a folder, a .venv/ and node_modules/ in a zip: full marks."""
    grade = intake_class[name]
    assert grade.broken == ""
    assert memory_results(grade) == passing(1, 2, 3, 4, 5, 6)
    assert grade.score == 6 * MEMORY_POINTS + typecheck_points["solution"]
    assert all(item in grade.note for item in left_out), grade.note


def test_a_renamed_tree_alone_in_the_hand_in_is_graded_and_the_note_says_so(
    intake_class: dict[str, Grade],
) -> None:
    """No starter/, one tree named mywork/: graded for what it is, and the note says which."""
    grade = intake_class["mywork"]
    assert memory_results(grade) == passing(1, 2, 3, 4, 5, 6)
    assert "no starter/ in the hand-in: graded mywork/ instead" in grade.note


def test_a_hand_in_whose_only_tree_is_the_solution_is_refused_saying_so(
    intake_class: dict[str, Grade],
) -> None:
    """The course's solution/ alone is never graded: zero, and why."""
    grade = intake_class["only-solution"]
    assert grade.score == 0
    assert "every lab tree in the hand-in is a solution (solution/)" in grade.broken


def test_a_hand_in_over_the_caps_once_junk_is_left_out_names_its_largest_paths(
    intake_class: dict[str, Grade],
) -> None:
    """70 MB of Python in the tree: refused, naming the file that makes it so."""
    grade = intake_class["too-big"]
    assert grade.score == 0
    assert grade.broken.startswith("could not grade: more than 64 MB")
    assert "starter/generated/big.py (70 MB), starter/generated/data.py (5.0 MB)" in grade.broken


def labs_grade(*args: str, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    """python -m labs grade ARGS, in English, graded on DATABASE_URL's server when one is given
    (LAB_POSTGRES=url), else as by default."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_LANG", "LANG")}
    env |= {"LANGUAGE": "en"}
    env |= {"DATABASE_URL": database_url, "LAB_POSTGRES": "url"} if database_url else {}
    return subprocess.run(
        [sys.executable, "-m", "labs", "grade", "--timeout", "10", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_grade_takes_the_trees_name_from_the_instructor(tmp_path: Path) -> None:
    """--tree lab8: the solved lab8/ is graded, the untouched starter/ beside it named."""
    hand_in = make.starter_copy(tmp_path / "ada").parent
    copy_tree(make.fixed(tmp_path / "build") / "starter", hand_in / "lab8")
    done = labs_grade("--tree", "lab8", "--out", str(tmp_path / "out"), str(hand_in))
    assert done.returncode == 0, done.stderr
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8-sig") as rows:
        (row,) = list(csv.DictReader(rows))
    assert [row[str(n)] for n in range(1, 7)] == ["pass"] * 6
    assert "graded lab8/; other lab trees in the hand-in, not graded: starter/" in row["note"]


def refused_before_grading(done: subprocess.CompletedProcess[str], out: Path) -> str:
    """What labs grade said when it refused the class: non-zero, no row graded, nothing written."""
    assert done.returncode != 0, done.stdout + done.stderr
    assert "refusing to grade the class, no hand-in was graded" in done.stderr
    assert "[1/" not in done.stderr and "grades.csv" not in done.stdout
    assert not (out / "grades.csv").exists() and not (out / "submissions").exists()
    return done.stderr


@pytest.mark.postgres
def test_a_role_without_createrole_refuses_the_class_before_any_hand_in_is_graded(
    batch_folder: Path, reachable_database: str, tmp_path: Path
) -> None:
    """Never 70/70 beside 40/110 with exit 0: refused, with the one fix, safe on Postgres 15.

    Up to 15 the fix is the grader's own cluster, or a superuser on a server
    kept for grading, never CREATEROLE; from 16 it is `ALTER ROLE ... CREATEROLE;`.
    Given what the fix asks, the same check passes, and leaves no role behind.
    """
    role = f"teacher_{uuid.uuid4().hex[:8]}"
    superuser(reachable_database, f"CREATE ROLE {role} LOGIN")
    try:
        url = reachable_database.replace("postgresql://postgres@", f"postgresql://{role}@", 1)
        out = tmp_path / "out"
        done = labs_grade("--out", str(out), *hand_ins(batch_folder), database_url=url)
        said = refused_before_grading(done, out)
        with psycopg2.connect(reachable_database) as connection, connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version_num')::int")
            version = (cursor.fetchone() or [0])[0]
        connection.close()
        if version < SAFE_CREATEROLE:
            assert "CREATEROLE would let it make itself a superuser" in said
            assert "ALTER ROLE" not in said and "GRANT" not in said
            assert "cluster of the grader's own" in said
        else:
            assert f"`ALTER ROLE {role} CREATEROLE;`" in said
        check_class_database(reachable_database)
        assert grading_leftovers(reachable_database) == []
    finally:
        superuser(reachable_database, f"DROP ROLE {role}")


def test_a_server_that_cannot_be_reached_refuses_the_class(
    batch_folder: Path, tmp_path: Path
) -> None:
    """DATABASE_URL at a port nothing listens on: refused before grading, asking the one thing."""
    url = f"postgresql://koda:pw@127.0.0.1:{free_port()}/koda"
    done = labs_grade("--out", str(tmp_path), *hand_ins(batch_folder), database_url=url)
    said = refused_before_grading(done, tmp_path)
    assert "cannot connect to" in said and "is Postgres running, and DATABASE_URL right?" in said
    assert ":pw@" not in said


@pytest.mark.postgres
def test_a_server_that_will_not_let_submissions_log_in_refuses_the_class(
    pg_cluster: TempCluster, batch_folder: Path, tmp_path: Path
) -> None:
    """The grader logs in, the submissions' roles may not (pg_hba.conf): refused, naming it."""
    with started(pg_cluster.bindir, auth="debian") as cluster:
        url = cluster.create_database("koda")
        cluster.allow("host all all 127.0.0.1/32 reject")
        cluster.allow("host all postgres 127.0.0.1/32 scram-sha-256")
        until_accepted(url)
        done = labs_grade("--out", str(tmp_path), *hand_ins(batch_folder), database_url=url)
        said = refused_before_grading(done, tmp_path)
        assert "cannot log in" in said and "pg_hba.conf" in said
        assert grading_leftovers(url) == []


def test_a_throwaway_postgres_that_will_not_start_refuses_the_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without DATABASE_URL the migrations run on a throwaway Postgres: if it fails, no one is
    graded (those with a migration would lose those points from their maximum, not the rest)."""

    class Broken:
        """A cluster whose initdb fails, as on a machine with a broken PostgreSQL install."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            raise OSError("initdb: cannot create the data folder")

    monkeypatch.setattr(on_postgres_throwaway, "_started", {})
    monkeypatch.setattr(on_postgres_throwaway, "find_bindir", lambda: Path("/usr/lib/pg/bin"))
    monkeypatch.setattr(on_postgres_throwaway, "TempCluster", Broken)
    make.with_migration(make.fixed(tmp_path / "ada") / "starter")
    make.starter_copy(tmp_path / "ben")
    graded: list[Grade] = []
    with pytest.raises(GradingRefusedError, match="could not make a throwaway Postgres"):
        grade_all(
            [tmp_path / "ada", tmp_path / "ben"],
            timeout=TIMEOUT,
            database_url=None,
            on_done=graded.append,
        )
    assert graded == []
