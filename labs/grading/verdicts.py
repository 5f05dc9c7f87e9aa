"""GitHub Classroom's side of grading: install the kit, grade once, then read each verdict.

python -P -m labs.grading.verdicts install
    (as root, from the root-owned virtualenv the kit was pip-installed
    into) adds the py.typed marker the typecheck reads the kit's types by,
    which a non-editable install lacks, and builds the typecheck's baseline
    cache, so no later step writes beside the kit. (The Alembic environment a
    migration runs in ships inside the package: labs/pg/environment.)
python -P -m labs.grading.verdicts grade --tree starter [--into DIR]
    (as root, with an environment of nothing but PATH and DATABASE_URL)
    grades every criterion once, the learner's code only in the sandbox,
    into results.json in a new folder of an unpredictable name under DIR
    (default /var/lib/lab-grading, made 0700 and root's own).
python -P -m labs.grading.verdicts read KEY [--from DIR]
    prints one criterion's verdict from there and exits 0 exactly when it
    passed: what each of Classroom's per-criterion steps runs. It runs no
    learner code and reads nothing the learner could have written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from labs.trees.finding import REPO_ROOT

from .criteria import CRITERIA
from .errors import OutputError
from .outputs import GRADER_UMASK, only_results_folder, private_results_folder, read_private

RESULTS_ROOT = Path("/var/lib/lab-grading")
RESULTS_NAME = "results.json"


def install() -> int:
    """Mark the installed package as typed and build the typecheck's baseline cache."""
    (REPO_ROOT / "labs" / "py.typed").touch()  # the typecheck reads the installed kit's types
    from .typecheck import baseline_cache

    baseline_cache()
    print(f"lab kit ready in {REPO_ROOT}")
    return 0


def grade(tree: str, into: Path, strict: bool) -> int:
    """Every criterion once, into a new private folder under into; pytest_main's exit code."""
    from .pytest_main import main

    os.umask(GRADER_UMASK)
    folder = private_results_folder(into)
    argv = [f"--lab-tree={Path(tree).absolute()}", f"--lab-results={folder / RESULTS_NAME}", "-q"]
    return main([*argv, *(["--lab-strict"] if strict else [])])


def read(key: str, source: Path) -> int:
    """Print one criterion's verdict from the grading step's results; 0 exactly when it passed."""
    criterion = next((c for c in CRITERIA if c.key == key), None)
    if criterion is None:
        print(f"no criterion {key}; the criteria are " + ", ".join(c.key for c in CRITERIA))
        return 2
    try:
        document = json.loads(read_private(only_results_folder(source) / RESULTS_NAME))
    except (OutputError, ValueError) as error:
        print(f"could not grade {key}: {error}")
        return 1
    entry = next((t for t in document.get("tests", []) if t.get("name") == criterion.title), None)
    if document.get("message"):
        print(f"note: {document['message']}")
    if entry is None:
        print(f"{criterion.title}: not graded (no database configured?)")
        return 1
    print(f"{criterion.title}: {str(entry.get('status', '')).upper()}")
    for field in ("message", "output"):
        if entry.get(field):
            print(entry[field])
    return 0 if entry.get("status") == "pass" else 1


def main(argv: list[str] | None = None) -> int:
    """python -P -m labs.grading.verdicts install|grade|read ..."""
    parser = argparse.ArgumentParser(prog="python -P -m labs.grading.verdicts")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="finish the kit's root-owned install")
    grading = commands.add_parser("grade", help="grade every criterion once, as root")
    grading.add_argument("--tree", required=True)
    grading.add_argument("--into", type=Path, default=RESULTS_ROOT)
    grading.add_argument("--strict", action="store_true")
    reading = commands.add_parser("read", help="one criterion's verdict: exit 0 when it passed")
    reading.add_argument("key")
    reading.add_argument("--from", dest="source", type=Path, default=RESULTS_ROOT)
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            return install()
        if args.command == "grade":
            return grade(args.tree, args.into, args.strict)
        return read(args.key, args.source)
    except OutputError as error:
        print(f"verdicts: {error}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
