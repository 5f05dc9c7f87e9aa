"""python -m labs release OUT: the learners' repository, with no solution in it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml

from labs.commands.release import FIRST_COMMAND, ReleaseError, write_release
from labs.grading.actions import KIT_PATH, WORKFLOW_PATH
from labs.lesson.states import LESSON_MOVES
from labs.trees.finding import REPO_ROOT
from tests.grading import submissions as make
from tests.grading.mistakes import migrations as variant

KIT_REF = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release, written once for this module."""
    out = tmp_path_factory.mktemp("release") / "learners"
    write_release(out, "teacher/day8-template", KIT_REF)
    return out


def run_released(
    release: Path, code: list[str], env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run Python in the release as a fresh install would: its own files, no solution anywhere.

    -S skips this machine's .pth files (the editable install of the instructors'
    checkout, which maps `solution`), and the site-packages folder is put on the
    path after the release, so the libraries are there and nothing else is.
    """
    path = os.pathsep.join([str(release), sysconfig.get_paths()["purelib"]])
    clean = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DATABASE_URL", "SELFTEST")}
    return subprocess.run(
        [sys.executable, "-S", "-P", *code],
        cwd=cwd or release,
        env={**clean, "PYTHONPATH": path, **(env or {})},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_the_release_holds_no_solution_anywhere(release: Path) -> None:
    """No solution tree, no solution migration, no SOLUTION marker in any file, none of the
    project's tests (only the learners' own) and no guide to them (CONTRIBUTING.md)."""
    assert not (release / "solution").exists()
    assert not (release / "migrations" / "versions" / "solution").exists()
    assert [p.name for p in (release / "tests").iterdir()] == ["test_your_lab.py"]
    assert not (release / "CONTRIBUTING.md").exists()
    marker = b"SOLUTION" + b"("
    carrying = [p for p in release.rglob("*") if p.is_file() and marker in p.read_bytes()]
    assert carrying == []
    assert (release / "starter" / "shared" / "keys.py").is_file()
    assert (release / "labs" / "HANDOUT.md").is_file()
    assert (release / "labs" / "grading" / "pytest_main.py").is_file()


def test_the_learners_documents_come_in_both_languages_and_every_link_resolves(
    release: Path,
) -> None:
    """README.md and README.zh_CN.md at the top; no link in a learner's document leads nowhere."""
    assert "简体中文" in (release / "README.md").read_text(encoding="utf-8")
    assert "English" in (release / "README.zh_CN.md").read_text(encoding="utf-8")
    links, broken = 0, []
    for document in [*release.glob("*.md"), *(release / "labs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)", document.read_text(encoding="utf-8")):
            links += "://" not in target
            if "://" not in target and not (document.parent / target).exists():
                broken.append(f"{document.relative_to(release)} -> {target}")
    assert links >= 6 and not broken, broken


def test_the_release_has_no_diff_view(release: Path) -> None:
    """The dashboard's diff (starter against solution) is left out, code and picture."""
    for name in ("web/views/diff.py", "web/templates/diff.html", "docs/dashboard-diff.png"):
        assert not (release / name).exists(), name


def test_the_readmes_first_command_ends_with_3_passed_3_failed(release: Path) -> None:
    """The learners' README opens with the install and the self-checks, which fail 3, 4 and 5."""
    readme = (release / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)\n", readme)
    assert first is not None
    assert first[1] == FIRST_COMMAND
    done = run_released(release, ["-m", "starter"], {"MOCK": "1", "SELFTEST": "1"})
    assert done.stdout.rstrip().endswith("3 passed, 3 failed"), done.stdout + done.stderr
    assert done.returncode != 0


def test_the_readme_speaks_to_learners(release: Path) -> None:
    """No command or link in the learners' README needs a file the release left out."""
    readme = (release / "README.md").read_text(encoding="utf-8")
    assert "solution" not in readme.lower()
    for link in re.findall(r"\]\(([^)#]+)\)", readme):
        assert (release / link).exists(), link
    for command in re.findall(r"`(python -m labs [a-z]+)", readme):
        name = command.split()[-1]
        assert (release / "labs" / "commands" / f"{name}.py").is_file(), command


def test_the_dashboard_starts_without_the_solution(release: Path) -> None:
    """The dashboard serves the starter's checks and runs, with no diff link and no diff page."""
    probe = (
        "from web import create_app\n"
        "app = create_app({'TESTING': True})\n"
        "client = app.test_client()\n"
        "checks = client.get('/checks')\n"
        "runs = client.get('/runs/starter')\n"
        "print(checks.status_code, runs.status_code, client.get('/diff').status_code)\n"
        "print(sorted(app.config['TREES']), 'Diff</a>' in checks.text, 'solution' in runs.text)\n"
    )
    done = run_released(release, ["-c", probe])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["200 200 404", "['starter'] False False"]


def test_the_release_lists_its_commands_without_the_instructors_ones(release: Path) -> None:
    """`python -m labs` works in the release and offers no diff or drift."""
    done = run_released(release, ["-m", "labs", "--help"])
    assert done.returncode == 0, done.stderr
    assert "check" in done.stdout and "release" in done.stdout
    assert "diff" not in done.stdout and "drift" not in done.stdout


@pytest.mark.parametrize(("solved", "score"), [(True, 70), (False, 30)], ids=["solved", "starter"])
def test_the_release_is_a_kit_that_grades(
    release: Path, tmp_path: Path, solved: bool, score: int
) -> None:
    """The release, which the Actions workflow installs as its kit, grades a learner's tree."""
    if solved:
        make.fixed(tmp_path / "learner")
        variant.place(tmp_path / "learner" / "starter", variant.reference())
    else:
        make.starter_copy(tmp_path / "learner")
    only = ",".join([*(f"memory-{n}" for n in range(1, 7)), "migration"])
    command = ["-m", "labs.grading.pytest_main", "--lab-tree", "starter", "--lab-only", only]
    done = run_released(release, [*command, "--lab-fail-under", "70"], cwd=tmp_path / "learner")
    assert f"total: {score} / 70" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.returncode == (0 if solved else 1)


def test_the_release_workflow_pins_the_kit_it_was_given(release: Path) -> None:
    """The workflow installs the kit from the repository and commit given to release."""
    steps = yaml.safe_load((release / WORKFLOW_PATH).read_text(encoding="utf-8"))["jobs"]["grade"][
        "steps"
    ]
    kit = next(s for s in steps if "repository" in s.get("with", {}))
    assert kit["with"] == {
        "repository": "teacher/day8-template",
        "ref": KIT_REF,
        "path": KIT_PATH,
        "persist-credentials": False,
    }


def test_the_lessons_allowlist_is_the_solutions() -> None:
    """labs/lesson/states.py, which the release keeps, says what solution/shared/states.py says."""
    from solution.shared.states import ALLOWED

    reference = {
        str(state): frozenset(str(t) for t in targets) for state, targets in ALLOWED.items()
    }
    assert reference == LESSON_MOVES


@pytest.mark.parametrize(
    ("ref", "message"),
    [("main", "full commit hash"), (None, "not an empty folder")],
    ids=["unpinned", "existing-folder"],
)
def test_a_release_that_cannot_be_written_as_promised_writes_nothing(
    tmp_path: Path, ref: str | None, message: str
) -> None:
    """An unpinned kit or a folder already in use is refused, and nothing is written."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    target = out if ref is None else tmp_path / "fresh"
    with pytest.raises((ReleaseError, ValueError), match=message):
        write_release(target, ref=ref or KIT_REF)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_the_release_command_prints_how_to_start(tmp_path: Path) -> None:
    """`python -m labs release OUT` writes the folder and says what to run there."""
    done = subprocess.run(
        [sys.executable, "-m", "labs", "release", str(tmp_path / "out")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MOCK=1 SELFTEST=1 python -m starter" in done.stdout
    assert (tmp_path / "out" / "starter" / "__init__.py").is_file()


def test_pytest_passes_in_a_fresh_clone_of_the_release(release: Path, tmp_path: Path) -> None:
    """git clone, then `pytest`: the learners' own tests pass, with no xdist and no dev extra."""
    origin = tmp_path / "origin"
    shutil.copytree(release, origin)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "release"]):
        subprocess.run([*git, *command], cwd=origin, check=True, capture_output=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "clone")], check=True)
    # Only the plugins a learner's `pip install -e '.[grading]'` brings: pytest-timeout.
    done = run_released(
        tmp_path / "clone",
        ["-m", "pytest", "-p", "pytest_timeout", "-q"],
        {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"\b2 passed\b", done.stdout), done.stdout[-2000:]


def test_the_releases_pyproject_has_no_solution_dev_extra_or_xdist(release: Path) -> None:
    """Its package list, extras and pytest options are the ones a learner's install has."""
    project = tomllib.loads((release / "pyproject.toml").read_text(encoding="utf-8"))
    assert "solution*" not in project["tool"]["setuptools"]["packages"]["find"]["include"]
    assert set(project["project"]["optional-dependencies"]) == {"grading"}
    addopts = project["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert not {"-n", "--dist", "auto", "loadscope"} & set(addopts)


def test_the_releases_documents_point_at_the_starter(release: Path) -> None:
    """No command in a released text file runs, serves or migrates the solution."""
    solution_commands = re.compile(
        r"python -m\s+solution|solution\.(?:worker|seed|gateway)|tree=solution"
        r"|DB_SCHEMA=solution|LAB_TREE[:=-]+solution|versions/solution"
    )
    found = [
        f"{path.relative_to(release)}: {match[0]}"
        for path in sorted(release.rglob("*"))
        if path.is_file() and path.suffix in (".md", ".yml", ".toml", ".example", "")
        for match in solution_commands.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert found == []


def test_the_releases_gitignore_covers_virtualenvs_and_caches(release: Path) -> None:
    """.venv/ (the README's first command makes it) and the tools' caches stay out of git."""
    ignored = set((release / ".gitignore").read_text(encoding="utf-8").splitlines())
    assert {".venv/", "venv/", "__pycache__/", ".pytest_cache/", ".mypy_cache/"} <= ignored


def test_an_instructors_command_in_the_release_lists_the_commands_there(release: Path) -> None:
    """`labs drift`, left out of the release, is refused with the commands the release has."""
    done = run_released(release, ["-m", "labs", "drift"])
    assert done.returncode == 2
    assert "invalid choice: 'drift' (choose from " in done.stderr
    assert "check" in done.stderr.split("choose from", 1)[1]
