"""The installs the docs give: what each carries, the versions grading pins, and who uses the pins.

`.ci/fresh-installs` builds each install in a fresh virtualenv and runs the
docs' commands there; these tests keep the files it relies on consistent.
"""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from labs.commands.release import FIRST_COMMAND
from labs.grading.actions import KIT_PATH, WORKFLOW_PATH, grading_workflow
from labs.trees.finding import REPO_ROOT

CONSTRAINTS = REPO_ROOT / "labs" / "grading" / "constraints.txt"
PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
GRADE_DECIDING = {
    "mypy",
    "pytest",
    "types-psycopg2",
    "pydantic",
    "sqlmodel",
    "sqlalchemy",
    "time-machine",
}


def requirements(group: str | None) -> dict[str, Requirement]:
    """The base install's requirements (group None) or an extra's, by canonical name."""
    found = (
        PROJECT["project"]["dependencies"]
        if group is None
        else PROJECT["project"]["optional-dependencies"][group]
    )
    return {canonicalize_name(r.name): r for r in map(Requirement, found)}


def pins() -> dict[str, str]:
    """name -> version for each `name==version` line of the constraints file."""
    found: dict[str, str] = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line!r}"
            found[canonicalize_name(name)] = version
    return found


def test_the_constraints_pin_only_versions_pyproject_admits() -> None:
    """Each pin names a requirement of the base or the grading install, in its range."""
    admitted = requirements(None) | requirements("grading")
    for name, version in pins().items():
        assert name in admitted, f"{name} is pinned but pyproject.toml does not require it"
        assert admitted[name].specifier.contains(version, prereleases=True), (name, version)


def test_the_versions_that_decide_a_grade_are_all_pinned() -> None:
    """mypy, pytest, the stubs and the typed libraries: each has its pin."""
    missing = {canonicalize_name(n) for n in GRADE_DECIDING} - pins().keys()
    assert not missing


def test_the_base_install_carries_the_typecheck_and_grading_adds_pytest() -> None:
    """`pip install -e .` has mypy and the stubs; `.[grading]` has pytest and its timeout plugin."""
    assert {"mypy", "types-psycopg2", "pydantic"} <= requirements(None).keys()
    assert {"pytest", "pytest-timeout"} <= requirements("grading").keys()


def test_the_constraints_file_ships_with_the_kit() -> None:
    """An installed kit (not editable) holds it: it is package data of labs.grading."""
    data = PROJECT["tool"]["setuptools"]["package-data"]
    assert "constraints.txt" in data["labs.grading"]


def test_the_grading_workflow_installs_with_the_constraints() -> None:
    """The generated workflow and the shipped one both pass the kit's constraints file to pip."""
    expected = f'-c "$GITHUB_WORKSPACE/{KIT_PATH}/labs/grading/constraints.txt"'
    for text in (grading_workflow(), (REPO_ROOT / WORKFLOW_PATH).read_text(encoding="utf-8")):
        installs = [line for line in text.splitlines() if "pip install" in line]
        assert installs and all(expected in line for line in installs), installs


def test_instructors_md_installs_with_the_constraints() -> None:
    """INSTRUCTORS.md gives the grading install with `-c labs/grading/constraints.txt`."""
    text = (REPO_ROOT / "labs" / "INSTRUCTORS.md").read_text(encoding="utf-8")
    assert "pip install -c labs/grading/constraints.txt -e '.[grading]'" in text
    installs = re.findall(r"pip install [^\n`]*\[grading\][^\n`]*", text)
    assert installs and all("-c labs/grading/constraints.txt" in i for i in installs)


def test_the_shipped_mypy_settings_are_pyprojects() -> None:
    """labs/mypy.toml, which an installed kit typechecks with, holds pyproject's [tool.mypy]."""
    shipped = tomllib.loads((REPO_ROOT / "labs" / "mypy.toml").read_text(encoding="utf-8"))
    assert shipped["tool"]["mypy"] == PROJECT["tool"]["mypy"]
    assert shipped.keys() == {"tool"} and shipped["tool"].keys() == {"mypy"}


def test_ci_runs_the_fresh_installs_and_fails_with_them() -> None:
    """.ci/run calls .ci/fresh-installs and exits non-zero when it fails."""
    run = (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash .ci/fresh-installs || fresh=$?" in run
    assert "if [[ $status -eq 0 && $fresh -ne 0 ]]; then" in run
    script = (REPO_ROOT / ".ci" / "fresh-installs").read_text(encoding="utf-8")
    for install in ("-e .", "installed .", "-c labs/grading/constraints.txt -e '.[grading]'"):
        assert install in script


def test_the_licence_metadata_names_every_licence_the_distribution_ships() -> None:
    """pyproject's licence is LICENSE's MIT plus the shipped vendored files' own, each listed.

    web/static/vendor (axe-core, for the tests) is left out of the distribution, and so is
    its licence."""
    project = PROJECT["project"]
    assert (REPO_ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License\n")
    assert project["license"].split(" AND ")[0] == "MIT"
    listed = set(project["license-files"])
    assert all((REPO_ROOT / name).is_file() for name in listed), listed
    vendored = {
        str(path.relative_to(REPO_ROOT))
        for path in (REPO_ROOT / "web" / "static").rglob("*LICENSE*")
        if "vendor" not in path.relative_to(REPO_ROOT / "web" / "static").parts
    }
    left_out = PROJECT["tool"]["setuptools"]["exclude-package-data"]["web"]
    assert "static/vendor/*" in left_out
    assert vendored and vendored | {"LICENSE"} == listed


def first_bash_line(name: str) -> str:
    """The first line of a document's first bash block."""
    found = re.search(r"```bash\n(.*?)\n", (REPO_ROOT / name).read_text(encoding="utf-8"))
    assert found is not None, name
    return found[1]


def test_every_readmes_first_command_makes_and_uses_a_virtualenv_before_pip() -> None:
    """README and the learners' two: a venv made and activated first, so no system pip runs."""
    for name in ("README.md", "labs/LEARNER_README.md", "labs/LEARNER_README.zh_CN.md"):
        assert first_bash_line(name) == FIRST_COMMAND, name
    steps = FIRST_COMMAND.split(" && ")
    made = steps.index("python3 -m venv .venv")
    used = steps.index(". .venv/bin/activate")
    assert made < used < min(i for i, step in enumerate(steps) if step.startswith("pip "))
    assert steps[-1] == "MOCK=1 SELFTEST=1 python -m starter"


def test_the_fresh_installs_run_the_readmes_first_line_with_an_externally_managed_python() -> None:
    """.ci/fresh-installs reads README's first line itself and runs it with a marked python3."""
    script = (REPO_ROOT / ".ci" / "fresh-installs").read_text(encoding="utf-8")
    assert "first=$(sed -n '/^```bash$/{n;p;q}' README.md)" in script
    assert "EXTERNALLY-MANAGED" in script
    assert 'bash -c "$first"' in script


def test_the_virtualenv_the_first_command_makes_is_ignored_by_git() -> None:
    """`.venv/` (and any venv/) stays out of git: a learner's `git add .` never commits it."""
    ignored = (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {".venv/", "venv/"} <= set(ignored)
