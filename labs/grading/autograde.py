"""`python -I -m labs.grading.autograde`: one grading run for a platform's autograder.

The autograder a platform runs (labs/grading/autograder_script.py, written by
`python -m labs autograder`) installs the kit and then runs this module from
the kit's own virtualenv, with `-I`, from a folder the learner does not
control, as root:

python -I -m labs.grading.autograde prepare
    builds the typecheck's baseline cache beside the installed kit, so no
    later step writes there.
python -I -m labs.grading.autograde grade [--require-bwrap] --tree PATH --into DIR
    grades every criterion once, the learner's code only in the sandbox, into
    a new folder of an unpredictable name under DIR (0700, the grader's own,
    a fresh one each run), and writes there, beside the kit's results.json and
    junit.xml, each platform's file: result.json and release-body.md
    (Classroom 50), gradescope.json (Gradescope), summary.md (GitHub
    Actions). Its last line of output is that folder. It exits 0 when every
    criterion was graded, whatever the score; 3 when some could not be (no
    database, a grading machine's failure): the platforms' infrastructure
    error. With --require-bwrap (as every recipe of the kit runs it) it
    refuses, before anything starts, on a machine where bubblewrap cannot
    isolate the submission, with that same exit code.

Without DATABASE_URL, the grader grades on a Postgres cluster of its own
when the server binaries are installed (as GitHub's runners have them),
each tree in a database of its own (on_postgres_throwaway.py); the Postgres
criteria are otherwise not graded, which is an infrastructure error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from labs.sandbox.errors import NoIsolationError
from labs.sandbox.modes import BWRAP_FLAG, BWRAP_HELP
from labs.term.i18n import _
from labs.version import version_text

from .outputs import private_results_folder, read_private, write_safely
from .session import begin_grading

RESULTS = "results.json"
JUNIT = "junit.xml"
PLATFORM_FILES = ("result.json", "release-body.md", "gradescope.json", "summary.md")
NOT_GRADED = 3


def prepare() -> int:
    """Build the typecheck's baseline cache beside the installed kit."""
    from .typecheck import baseline_cache

    place = baseline_cache()
    print(f"typecheck baseline: {place or 'none (the typecheck runs without one)'}")
    return 0


def grade(tree: Path, into: Path, require_bwrap: bool = False) -> int:
    """Grade tree once into a fresh private folder under into; write every platform's file."""
    from .platforms import classroom50_result, feedback_markdown, gradescope_results, step_summary
    from .pytest_main import main

    if not (tree / "__init__.py").is_file():
        print(f"autograde: {tree} is not a lab tree (no __init__.py): nothing graded")
        return NOT_GRADED
    try:  # before the grader's Postgres starts or a folder is made (pytest_main says it again)
        begin_grading(bwrap=require_bwrap)
    except NoIsolationError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return NOT_GRADED
    folder = private_results_folder(into)
    code = main(
        [
            f"--lab-tree={tree.absolute()}",
            f"--lab-results={folder / RESULTS}",
            f"--junit={folder / JUNIT}",
            "-q",
            *([BWRAP_FLAG] if require_bwrap else []),
        ]
    )
    try:
        document = json.loads(read_private(folder / RESULTS))
    except (OSError, ValueError) as error:
        print(f"autograde: no results.json from the grading run (exit {code}): {error}")
        print(folder)
        return NOT_GRADED
    texts = {
        "result.json": json.dumps(classroom50_result(document), indent=2) + "\n",
        "release-body.md": feedback_markdown(document),
        "gradescope.json": json.dumps(gradescope_results(document), indent=2) + "\n",
        "summary.md": step_summary(document),
    }
    for name, text in texts.items():
        write_safely(folder / name, text)
    graded = code in (0, 1) and document.get("status") != "error"
    print(f"total: {document.get('score')} / {document.get('max_score')}")
    print(folder)
    return 0 if graded else NOT_GRADED


def main(argv: list[str] | None = None) -> int:
    """python -I -m labs.grading.autograde prepare|grade ..."""
    parser = argparse.ArgumentParser(prog="python -I -m labs.grading.autograde")
    parser.add_argument("--version", action="version", version=version_text())
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("prepare", help="build the typecheck's baseline beside the kit")
    grading = commands.add_parser("grade", help="grade a tree once, as root")
    grading.add_argument("--tree", type=Path, required=True)
    grading.add_argument("--into", type=Path, required=True)
    grading.add_argument(BWRAP_FLAG, action="store_true", help=_(BWRAP_HELP))
    args = parser.parse_args(argv)
    if args.command == "prepare":
        return prepare()
    from .errors import OutputError

    try:
        return grade(args.tree, args.into, args.require_bwrap)
    except OutputError as error:
        print(f"autograde: {error}", file=sys.stderr)
        return NOT_GRADED


if __name__ == "__main__":
    sys.exit(main())
