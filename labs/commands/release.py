"""python -m labs release OUT: write the repository learners get.

The starter, the lab kit, the docs and the GitHub Actions workflow; no
solution anywhere: not the solution tree, not its migration, not the
solution's region marker in any file, not the dashboard's diff view, not the
instructors' notes, not the project's own tests (they compare the starter with
the solution) nor CONTRIBUTING.md, the guide to them. The READMEs are the
learners' ones: labs/LEARNER_README.md and its Chinese version,
labs/LEARNER_README.zh_CN.md.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path

from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT
from labs.trees.regions import project_files

from ..grading.actions import (
    PLACEHOLDER_REF,
    PLACEHOLDER_REPOSITORY,
    WORKFLOW_PATH,
    grading_workflow,
)

# The READMEs' first command: a virtualenv first, so an externally managed Python runs it too.
FIRST_COMMAND = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . "
    "&& MOCK=1 SELFTEST=1 python -m starter"
)
MARKER = "SOLUTION" + "("  # spelled in two parts so this file does not carry it
LEFT_OUT = (
    "solution/",
    "migrations/versions/solution/",
    "tests/",
    ".ci/",
    "CONTRIBUTING.md",
    ".benchmarks/",
    "test-output/",
    "labs/INSTRUCTORS.md",
    "labs/LEARNER_README.md",
    "labs/LEARNER_README.zh_CN.md",
    "labs/trees/diff.py",
    "labs/commands/diff.py",
    "labs/commands/drift.py",
    "web/views/diff.py",
    "web/templates/diff.html",
    "web/templates/partials/diff_hunks.html",
    "docs/dashboard-diff.png",
    WORKFLOW_PATH,
    "README.md",
    "labs/lesson/learner_tests/",
)
# The learners' own tests: `pytest` in their repository checks the install, not the work.
LEARNER_TESTS = {"tests/test_your_lab.py": "labs/lesson/learner_tests/test_your_lab.py"}
# The learners' READMEs at the top of the release, and where each one comes from.
LEARNER_READMES = {
    "README.md": "labs/LEARNER_README.md",
    "README.zh_CN.md": "labs/LEARNER_README.zh_CN.md",
}
# Files that name the solution as the tree to serve or read: in the release, the starter. Each
# replacement must still find its text (a release that could not retarget a file is refused).
_RUN_THE_STARTER = (
    ("solution.worker", "starter.worker"),
    ("solution.seed", "starter.seed"),
    ("python -m solution", "python -m starter"),
)
RETARGETED = {
    ".env.example": (("LAB_TREE=solution", "LAB_TREE=starter"),),
    "docker-compose.yml": (("${LAB_TREE:-solution}", "${LAB_TREE:-starter}"),),
    "Dockerfile": (('"-m", "solution"', '"-m", "starter"'),),
    "MOCK.md": _RUN_THE_STARTER,
    "MOCK.zh_CN.md": _RUN_THE_STARTER,
    "migrations/README.md": (
        ("One Alembic environment serves both trees.", "One Alembic environment serves the tree."),
        (
            "- `versions/solution/`: the reference migration, generated from\n"
            "  `solution/shared/schema.py` and then read and tidied.\n",
            "",
        ),
        ("# create the solution's tables", "# create the starter's tables"),
        ("tree=solution", "tree=starter"),
    ),
    "deploy/README.md": (
        ("`solution`) once Postgres is healthy", "`starter`) once Postgres is healthy"),
        ("DB_SCHEMA=solution", "DB_SCHEMA=starter"),
        ("'solution.gateway:create_app()'", "'starter.gateway:create_app()'"),
    ),
}
# What runs in the learners' repository: no dev extra (the project's own test tools), no xdist
# options, and a pytest that runs the tests the release has.
PYPROJECT_REWRITES = (
    (re.compile(r"^dev = \[\n(?:    .*\n)*?\]\n", re.M), ""),
    (
        re.compile(r"^# One worker per core:.*?^addopts = .*?\n", re.M | re.S),
        "# pytest-benchmark, where a Python has it, is kept out: the tests here measure nothing.\n"
        'addopts = "-ra --strict-markers -p no:benchmark"\n',
    ),
)


class ReleaseError(Exception):
    """The release could not be written as promised; the message says why."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the release command."""
    parser = commands.add_parser(
        "release",
        help=_("write the learners' repository: starter, kit, docs, workflow; no solution"),
        description=_(
            "Write the repository learners get into OUT (which must not exist "
            "or be empty): the starter, the lab kit, the docs and the GitHub Actions "
            "workflow, without the solution, its migration, the diff view or the tests."
        ),
    )
    parser.add_argument("out", metavar="OUT", help=_("the folder to write (new or empty)"))
    parser.add_argument(
        "--kit-repository",
        default=PLACEHOLDER_REPOSITORY,
        metavar="OWNER/NAME",
        help=_("the GitHub repository the workflow installs the grading kit from"),
    )
    parser.add_argument(
        "--kit-ref",
        default=PLACEHOLDER_REF,
        metavar="SHA",
        help=_("the full commit hash of that repository the workflow pins"),
    )
    parser.set_defaults(func=run)


def released(name: str) -> bool:
    """Whether a project file goes into the learners' repository."""
    return not any(name == left or name.startswith(left) for left in LEFT_OUT if left)


def write_release(
    out: Path,
    repository: str = PLACEHOLDER_REPOSITORY,
    ref: str = PLACEHOLDER_REF,
    root: Path = REPO_ROOT,
) -> list[str]:
    """Write the learners' repository into out; return the files written, relative.

    It is built in a temporary folder beside out and moved into place only
    once checked, so a refused release leaves nothing behind.
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(
            _("{out} exists and is not an empty folder: choose a new one").format(out=out)
        )
    workflow = grading_workflow(repository, ref)  # a bad pin fails before anything is written
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}-", dir=out.parent) as scratch:
        build = Path(scratch) / "release"
        written = []
        for name in filter(released, project_files(root)):
            target = build / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, target)
            retarget(target, name)
            if name == "pyproject.toml":
                released_pyproject(target)
            written.append(name)
        # The learners' README, in English and in Chinese, at the top of their repository.
        for readme, source in {**LEARNER_READMES, **LEARNER_TESTS}.items():
            (build / readme).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / source, build / readme)
        (build / WORKFLOW_PATH).parent.mkdir(parents=True, exist_ok=True)
        (build / WORKFLOW_PATH).write_text(workflow, encoding="utf-8")
        written += [*LEARNER_READMES, *LEARNER_TESTS, WORKFLOW_PATH]
        leaks = leaked(build)
        if leaks:
            raise ReleaseError(
                _("the release would show the solution: {files}").format(files=", ".join(leaks))
            )
        if out.exists():
            out.rmdir()
        build.rename(out)
    return sorted(written)


def retarget(target: Path, name: str) -> None:
    """Point a released file at the starter; ReleaseError when a replacement finds no text."""
    replacements = RETARGETED.get(name, ())
    if not replacements:
        return
    text = target.read_text(encoding="utf-8")
    for old, new in replacements:
        if old not in text:
            raise ReleaseError(f"{name} no longer says {old.strip()!r}: update RETARGETED")
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")


def released_pyproject(target: Path) -> None:
    """The learners' pyproject.toml: ReleaseError when a rewrite no longer finds its text."""
    text = target.read_text(encoding="utf-8")
    for pattern, replacement in PYPROJECT_REWRITES:
        text, count = pattern.subn(replacement, text)
        if count != 1:
            raise ReleaseError(f"pyproject.toml: {pattern.pattern!r} not found: update the release")
    target.write_text(text, encoding="utf-8")


def leaked(out: Path) -> list[str]:
    """Files of a release that still carry the solution's marker, or the solution itself."""
    found = [name for name in ("solution", "migrations/versions/solution") if (out / name).exists()]
    for path in sorted(out.rglob("*")):
        if path.is_file() and MARKER.encode() in path.read_bytes():
            found.append(str(path.relative_to(out)))
    return found


def run(args: argparse.Namespace) -> int:
    """Write the release and say what is in it."""
    out = Path(args.out)
    try:
        written = write_release(out, args.kit_repository, args.kit_ref)
    except (ReleaseError, ValueError) as error:
        print(_("release: {error}").format(error=error))
        return 1
    print(
        _("wrote {count} files to {out}: the starter, the lab kit, the docs, the workflow").format(
            count=len(written), out=out
        )
    )
    if args.kit_repository == PLACEHOLDER_REPOSITORY or args.kit_ref == PLACEHOLDER_REF:
        print(
            _(
                "note: {workflow} installs the grading kit from {repository} at {ref}: "
                "pass --kit-repository and --kit-ref to pin your own"
            ).format(workflow=WORKFLOW_PATH, repository=args.kit_repository, ref=args.kit_ref[:12])
        )
    print(_("try it: {command}").format(command=f"cd {out} && {FIRST_COMMAND}"))
    return 0
