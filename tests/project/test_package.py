"""The distribution ships what runs: the kit, the dashboard, the starter; not the solution,
the catalogs' sources or the tests' JavaScript. Every entry point names its version."""

from __future__ import annotations

import configparser
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from labs.commands.cli import CONSOLE_SCRIPT
from labs.grading.kitwheel import build_wheel
from labs.trees.finding import REPO_ROOT
from labs.version import DISTRIBUTION, kit_version

BIN = Path(sysconfig.get_path("scripts"))  # where pip put the console script


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """The wheel pip builds from a copy of the project's files, as the autograders ship it."""
    return zipfile.ZipFile(build_wheel(tmp_path_factory.mktemp("wheel")))


def test_the_wheel_holds_no_solution_no_catalog_sources_and_no_test_javascript(
    wheel: zipfile.ZipFile,
) -> None:
    """No solution/ package, no .po file, nothing of web/static/vendor (axe-core), no tests."""
    names = wheel.namelist()
    assert not [n for n in names if n.startswith("solution/")]
    assert not [n for n in names if n.endswith((".po", ".pot"))]
    assert not [n for n in names if n.startswith("web/static/vendor/")]
    assert not [n for n in names if "axe" in n.lower()]
    assert not [n for n in names if Path(n).name.startswith("test_")]


def test_the_wheel_holds_what_runs(wheel: zipfile.ZipFile) -> None:
    """The kit, the dashboard, the starter, the compiled catalog, the typed markers."""
    names = set(wheel.namelist())
    assert {"labs/__main__.py", "web/__main__.py", "starter/__main__.py"} <= names
    assert "labs/locale/zh_Hans_CN/LC_MESSAGES/lab.mo" in names
    assert "labs/grading/constraints.txt" in names
    assert {"labs/py.typed", "web/py.typed"} <= names
    assert "web/static/htmx.min.js" in names


def test_the_wheel_names_a_console_script_for_the_kit(wheel: zipfile.ZipFile) -> None:
    """entry_points.txt maps the project's command to the kit's command line."""
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parsed = configparser.ConfigParser()
    parsed.read_string(wheel.read(entry_points).decode())
    assert parsed["console_scripts"][CONSOLE_SCRIPT] == "labs.commands.cli:main"


def test_the_axe_tests_still_find_axe_core_in_the_checkout() -> None:
    """Left out of the wheel, axe-core stays where the browser tests load it from."""
    assert (REPO_ROOT / "web" / "static" / "vendor" / "axe.min.js").is_file()


@pytest.mark.parametrize(
    "command",
    [
        [str(BIN / CONSOLE_SCRIPT)],
        [sys.executable, "-m", "labs"],
        [sys.executable, "-m", "web"],
        [sys.executable, "-P", "-m", "labs.grading.pytest_main"],
        [sys.executable, "-I", "-m", "labs.grading.autograde"],
    ],
    ids=["console-script", "labs", "web", "pytest-main", "autograde"],
)
def test_every_entry_point_prints_the_installed_version(command: list[str]) -> None:
    """`--version` prints the program's name and the installed distribution's version."""
    done = subprocess.run(
        [*command, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO_ROOT.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f" {kit_version()}")
    assert kit_version() not in ("", "(not installed)"), DISTRIBUTION
