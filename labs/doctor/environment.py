"""What the doctor finds in the Python installation and on the machine.

Presence is asked of the import system (importlib.util.find_spec), versions
of the installed distributions (importlib.metadata): what mypy, pytest and
the grader will themselves find.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
from pathlib import Path

from labs.pg.cluster import find_bindir
from labs.sandbox.modes import cgroups_available, find_bwrap, probe
from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT, tree_root

from . import Finding

CONSTRAINTS = REPO_ROOT / "labs" / "grading" / "constraints.txt"
IMPORTS_PSYCOPG2 = re.compile(r"^\s*(import|from)\s+psycopg2\b", re.M)
PIN = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)")


def present(module: str) -> bool:
    """Whether the import system finds a module (a stub package's name included)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def grading_install() -> str:
    """The command that installs the grading extra, pinned where the kit has pins."""
    pinned = f"-c {CONSTRAINTS.relative_to(REPO_ROOT)} " if CONSTRAINTS.is_file() else ""
    return f"python -m pip install {pinned}-e '.[grading]'"


def trees_import_psycopg2() -> bool:
    """Whether a file of the starter or the solution imports psycopg2 itself."""
    for name in ("starter", "solution"):
        root = tree_root(name)
        for path in root.rglob("*.py"):
            if IMPORTS_PSYCOPG2.search(path.read_text(encoding="utf-8", errors="replace")):
                return True
    return False


def type_stubs() -> Finding:
    """mypy and the stubs the trees' imports need, for `labs typecheck`."""
    if not present("mypy"):
        return Finding("fix", _("mypy is not installed: python -m pip install -e ."))
    if trees_import_psycopg2() and not present("psycopg2-stubs"):
        return Finding(
            "fix",
            _(
                "the trees import psycopg2, whose type stubs mypy needs: "
                "python -m pip install types-psycopg2 (or python -m pip install -e .)"
            ),
        )
    return Finding("ok", _("mypy and the type stubs the trees need are installed"))


def grading_extra() -> Finding:
    """pytest and pytest-timeout, for the pinned pytest entry."""
    missing = [name for name in ("pytest", "pytest_timeout") if not present(name)]
    if missing:
        return Finding(
            "fix",
            _("the grading install is missing {names}: {command}").format(
                names=", ".join(name.replace("_", "-") for name in missing),
                command=grading_install(),
            ),
        )
    return Finding("ok", _("the grading install is there (pytest, pytest-timeout)"))


def pinned_versions(constraints: Path = CONSTRAINTS) -> Finding | None:
    """The installed versions against the grading pins, when the kit has a pins file."""
    if not constraints.is_file():
        return None
    differ = []
    for line in constraints.read_text(encoding="utf-8").splitlines():
        pin = PIN.match(line)
        if pin is None:
            continue
        name, wanted = pin.groups()
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found = _("none")
        if found != wanted:
            differ.append(f"{name} {found} ≠ {wanted}")
    if differ:
        return Finding(
            "warn",
            _(
                "{count} versions differ from the grading pins ({versions}), so a grade here may "
                "differ from the grader's: {command}"
            ).format(count=len(differ), versions=", ".join(differ), command=grading_install()),
        )
    return Finding(
        "ok", _("the versions that decide a grade match {file}").format(file=constraints.name)
    )


def chromium() -> Finding:
    """Chromium and Playwright, for the pictures and the browser tests."""
    path = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    if not (path.is_file() and os.access(path, os.X_OK)):
        return Finding(
            "warn",
            _(
                "no Chromium at {path}: the pictures (python -m web.screenshots) and the browser "
                "tests need it: apt-get install chromium, or set CHROMIUM"
            ).format(path=path),
        )
    if not present("playwright"):
        return Finding(
            "warn",
            _("Chromium is at {path}, but the pictures need Playwright: {command}").format(
                path=path, command="python -m pip install -e '.[dev]'"
            ),
        )
    return Finding("ok", _("Chromium at {path}, for the pictures").format(path=path))


def sandbox_tools() -> list[Finding]:
    """bubblewrap and cgroups, which the sandbox uses where it can: reported, never required."""
    findings = []
    bwrap = find_bwrap()
    if bwrap and probe(bwrap):
        findings.append(Finding("info", _("bwrap works: each sandbox gets namespaces of its own")))
    else:
        findings.append(
            Finding(
                "info",
                _("bwrap is missing or cannot make namespaces here: apt-get install bubblewrap"),
            )
        )
    if cgroups_available():
        findings.append(
            Finding("info", _("a cgroup per submission can be made: limits hold per submission"))
        )
    else:
        findings.append(
            Finding("info", _("no cgroup can be made here: limits hold per process and per user"))
        )
    return findings


def server_binaries() -> Finding:
    """The PostgreSQL server binaries, for throwaway clusters."""
    bindir = find_bindir()
    if bindir is None:
        return Finding(
            "warn",
            _(
                "no PostgreSQL server binaries: without DATABASE_URL the migration criterion is "
                "not graded, and race and bench need a server: apt-get install postgresql"
            ),
        )
    return Finding(
        "ok",
        _("PostgreSQL server binaries in {folder}, for throwaway clusters").format(folder=bindir),
    )


def environment_findings() -> list[Finding]:
    """Everything the doctor says about this installation and machine, in order."""
    pins = pinned_versions()
    return [
        type_stubs(),
        grading_extra(),
        *([pins] if pins else []),
        server_binaries(),
        chromium(),
        *sandbox_tools(),
    ]
