"""Every name the learners' workflow and the docs give of the kit still exists.

The GitHub Actions workflow runs `python -I -m labs.grading.autograde` (which grades through the
pinned `labs.grading.pytest_main`) from a kit pinned to a commit, pytest loads the plugin
by its pytest11 entry point, and learners and
instructors type the `python -m labs <command>` lines the READMEs and INSTRUCTORS.md show.
A module moved without its name following would break them far from here: each name is
read out of those files and looked up.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from labs.commands.cli import build_parser
from labs.grading.actions import WORKFLOW_PATH, grading_workflow
from labs.trees.finding import REPO_ROOT

# What the learners' repository holds (labs release writes them) and what instructors read.
WORKFLOWS = {
    "the template's workflow": (REPO_ROOT / WORKFLOW_PATH).read_text(encoding="utf-8"),
    "the workflow labs release writes": grading_workflow("teacher/day8", "0" * 40),
}
DOCS = [
    "README.md",
    "CONTRIBUTING.md",
    "deploy/README.md",
    "MOCK.md",
    "labs/INSTRUCTORS.md",
    "labs/HANDOUT.md",
    "labs/HANDOUT.zh_CN.md",
    "labs/LEARNER_README.md",
    "labs/LEARNER_README.zh_CN.md",
]
MODULE_RUN = re.compile(r"python3? (?:-[PI] )?-m (labs[\w.]*)")
COMMAND = re.compile(r"python3? (?:-P )?-m labs ([a-z][\w-]*)")
# A dotted name of the kit in backquotes (labs.trees.diff.tree_diff), and a path of its files.
DOTTED = re.compile(r"`(labs(?:\.\w+)+)(?:\(\))?`")
PATH = re.compile(r"(?<![\w/.])((?:labs|web)/[\w/]+\.py)\b")


def text_of(name: str) -> str:
    """A document of the repository, by its path."""
    return (REPO_ROOT / name).read_text(encoding="utf-8")


def every_text() -> dict[str, str]:
    """The workflows and the documents, by name."""
    return {**WORKFLOWS, **{name: text_of(name) for name in DOCS}}


def found(pattern: re.Pattern[str], texts: dict[str, str]) -> list[tuple[str, str]]:
    """(where, what) for each distinct match of pattern in the texts."""
    return sorted(
        {(where, m.group(1)) for where, text in texts.items() for m in pattern.finditer(text)}
    )


@cache
def commands() -> set[str]:
    """The commands `python -m labs` has."""
    return {
        name
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }


def resolves(dotted: str) -> bool:
    """Whether a dotted name is a module of the kit, or an attribute of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except ModuleNotFoundError:  # a name inside a module, not a module of a package
            continue
        value: object = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def test_the_readers_find_what_the_files_name() -> None:
    """The patterns see the names they must (samples from each kind of file)."""
    assert ("the template's workflow", "labs.grading.autograde") in found(MODULE_RUN, WORKFLOWS)
    docs = every_text()
    assert ("labs/INSTRUCTORS.md", "grade") in found(COMMAND, docs)
    assert ("labs/INSTRUCTORS.md", "labs.trees.diff.tree_diff") in found(DOTTED, docs)
    assert not resolves("labs.checking.no_such_module") and not resolves("labs.trees.diff.nope")


@pytest.mark.parametrize(("where", "module"), found(MODULE_RUN, every_text()))
def test_each_module_run_with_python_m_starts(where: str, module: str) -> None:
    """`python -m MODULE --help` answers with its usage, for every MODULE the files run."""
    if module == "labs.checking.host":  # the kit's own: it needs the pipes a launcher opens
        assert importlib.util.find_spec(module) is not None, where
        return
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "usage" in done.stdout, f"{where}: {done.stderr}"


@pytest.mark.parametrize(("where", "command"), found(COMMAND, every_text()))
def test_each_labs_command_the_docs_show_exists(where: str, command: str) -> None:
    """Every `python -m labs COMMAND` in a README, INSTRUCTORS.md or a workflow is a command."""
    assert command in commands(), f"{where} shows `python -m labs {command}`"


def test_the_pytest_plugin_loads_by_its_entry_point() -> None:
    """pyproject's pytest11 entry point names the grading plugin, and it has its hooks."""
    project = tomllib.loads(text_of("pyproject.toml"))["project"]
    module = importlib.import_module(project["entry-points"]["pytest11"]["lab_grading"])
    assert module.__name__ == "labs.grading.plugin"
    assert callable(module.pytest_addoption) and callable(module.pytest_configure)


@pytest.mark.parametrize(("where", "dotted"), found(DOTTED, every_text()))
def test_each_kit_name_the_docs_give_exists(where: str, dotted: str) -> None:
    """A `labs.x.y` the docs name is a module of the kit, or something in one."""
    assert resolves(dotted), f"{where} names {dotted}"


@pytest.mark.parametrize(("where", "path"), found(PATH, every_text()))
def test_each_kit_file_the_docs_give_exists(where: str, path: str) -> None:
    """A labs/... or web/... file the docs point to is there."""
    assert (REPO_ROOT / Path(path)).is_file(), f"{where} points to {path}"
