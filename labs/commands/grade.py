"""python -m labs grade SUBMISSIONS...: grade a class, with a progress bar and a summary."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import TextIO

from labs.grading.server_choice import CHOICES, Place, chosen_server, grading_place
from labs.sandbox.errors import NoIsolationError
from labs.sandbox.modes import BWRAP_FLAG, BWRAP_HELP, UNSAFE_FLAG, machine_isolation
from labs.sandbox.network import url_needs_network
from labs.term.i18n import _

from ..grading.batch import grade_all
from ..grading.class_report import CLASS_REPORT, terminal_lines, write_class_report
from ..grading.criteria import Grade
from ..grading.errors import GradingRefusedError, OutputError
from ..grading.feedback import FOLDER, write_class_feedback
from ..grading.outputs import output_folder
from ..grading.session import begin_grading
from ..grading.summary import table_lines, write_csv, write_markdown
from ..grading.tree_choice import TREE_NAME, tree_name_error


def postgres_said(database_url: str | None) -> str:
    """Where the class was graded on Postgres, for the closing line."""
    return {
        Place.URL: ", Postgres on DATABASE_URL's server",
        Place.OWN: ", Postgres on a cluster of the grader's own",
        Place.NONE: ", Postgres not graded (no PostgreSQL server binaries, no DATABASE_URL)",
    }[grading_place(database_url)]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the grade command."""
    parser = commands.add_parser(
        "grade",
        help=_("grade many submissions (folders or zips) in parallel"),
        description=_(
            "Grade submissions, each a folder or a zip holding a copy of the starter "
            "tree (and its migrations/ beside it). Each is graded in its own temporary copy, its "
            "code only in a sandbox (bubblewrap namespaces, a user of its own when run as root, "
            "memory and processes capped, no network, killed whole at the timeout); a broken "
            "one (syntax error, endless loop, missing file, bad zip) is reported and never stops "
            "the others. Prints a table and writes grades.csv and grades.md, class-report.md (the "
            "failing hand-ins grouped by the rule they broke, most common first), and for each "
            "submission a folder under submissions/ with its results.json, report.md and "
            "junit.xml. The checks on Postgres and the migrations are graded on a Postgres "
            "cluster of the grader's own where the server binaries are installed (each hand-in "
            "in a database of its own), else on DATABASE_URL's server (see --postgres). Without "
            "any sandbox on the machine it refuses."
        ),
    )
    parser.add_argument("submissions", nargs="+", type=Path, metavar="SUBMISSION")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help=_(
            "folder for grades.csv, grades.md, class-report.md and submissions/ "
            "(default: a new grades-DATE-TIME folder here)"
        ),
    )
    parser.add_argument(
        "--postgres",
        choices=CHOICES,
        default=None,
        help=_(
            "where to grade on Postgres: own (a cluster of the grader's own, each hand-in in "
            "a database of its own), url (DATABASE_URL's server) or auto (own where the "
            "PostgreSQL server binaries are installed; default: $LAB_POSTGRES, else auto)"
        ),
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help=_("submissions graded at once (default: the number of cores)"),
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help=_("seconds for each process running a learner's checks (default: 10)"),
    )
    parser.add_argument(
        "--tree",
        type=tree_name,
        default=TREE_NAME,
        metavar="NAME",
        help=_(
            "the folder name of the tree to grade in each hand-in (default: starter); another "
            "lab tree beside it is named in the note, and a solution/ is never graded"
        ),
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help=_("score 0 the criteria whose region code reaches outside the lesson"),
    )
    parser.add_argument(BWRAP_FLAG, action="store_true", help=_(BWRAP_HELP))
    parser.add_argument(
        UNSAFE_FLAG,
        action="store_true",
        help=_("grade even where no sandbox can be had: the learner's code runs as you"),
    )
    parser.set_defaults(func=run)


def tree_name(value: str) -> str:
    """--tree's value: a folder name, never solution's."""
    if why := tree_name_error(value):
        raise argparse.ArgumentTypeError(why)
    return value


class Progress:
    """A progress bar on a terminal; one line per finished submission otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.started = time.perf_counter()
        self.lock = threading.Lock()
        self.live = stream.isatty()
        self.draw("")

    def draw(self, last: str) -> None:
        """Redraw the bar (or print a line) after a submission finished."""
        if not self.live:
            if last:
                print(f"[{self.done}/{self.total}] {last}", file=self.stream, flush=True)
            return
        filled = int(30 * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (30 - filled)
        elapsed = time.perf_counter() - self.started
        print(
            f"\r[{bar}] {self.done}/{self.total}  {elapsed:4.1f} s  {last[:40]:<40}",
            end="",
            file=self.stream,
            flush=True,
        )

    def finished(self, grade: Grade) -> None:
        """Count one submission as graded."""
        with self.lock:
            self.done += 1
            self.draw(f"{grade.submission}: {grade.score}/{grade.max_score}")

    def close(self) -> None:
        """End the bar's line."""
        if self.live:
            print(file=self.stream)


def default_out(now: datetime, here: Path | None = None) -> Path:
    """A folder named for the run's minute in the current folder: grades-2025-03-14-0930.

    Grades hold learners' names and work: never loose files in whatever folder
    the command ran from, and never a folder git would offer to commit in this
    repository (its .gitignore ignores grades-*/). A later run writes a folder
    of its own, so a learner missing from it leaves no stale report behind.
    """
    return (here or Path.cwd()) / f"grades-{now:%Y-%m-%d-%H%M}"


def run(args: argparse.Namespace) -> int:
    """Grade, print the table, write the files; exit 0 when grading itself worked."""
    try:  # before anything is written: the first line names the mode, or why none will do
        isolation = begin_grading(unsafe=args.unsafe_no_sandbox, bwrap=args.require_bwrap)
    except NoIsolationError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    print(isolation.describe(), file=sys.stderr, flush=True)
    args.out = args.out or default_out(datetime.now())
    try:
        output_folder(args.out)
    except OutputError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    try:
        database_url = chosen_server(args.postgres)
    except ValueError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    tcp_database = url_needs_network(database_url)
    started = time.perf_counter()
    progress = Progress(len(args.submissions), sys.stderr)
    try:
        grades = grade_all(
            args.submissions,
            jobs=args.jobs,
            timeout=args.timeout,
            database_url=database_url,
            on_done=progress.finished,
            strict=args.strict,
            tree_name=args.tree,
        )
    except NoIsolationError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    except GradingRefusedError as error:
        print(
            _("grade: refusing to grade the class, no hand-in was graded: {error}").format(
                error=error
            ),
            file=sys.stderr,
        )
        return 2
    finally:
        progress.close()
    print("\n".join(table_lines(grades)))
    try:
        write_csv(grades, args.out / "grades.csv")
        write_markdown(grades, args.out / "grades.md")
        write_class_feedback(grades, args.out)
        lessons = write_class_report(grades, args.out)
    except OutputError as error:
        print(f"grade: {error}", file=sys.stderr)
        return 2
    noted = sum(bool(g.note) for g in grades)
    print(
        f"{len(grades)} submissions graded in {time.perf_counter() - started:.1f} s"
        + (f", {noted} with a note to read" if noted else "")
        + postgres_said(database_url)
    )
    print(
        machine_isolation().describe()
        + ("; the network kept for Postgres (reached over TCP)" if tcp_database else "")
    )
    print(f"wrote {args.out / 'grades.csv'} and {args.out / 'grades.md'}")
    print(f"wrote results.json, report.md and junit.xml for each submission in {args.out / FOLDER}")
    print("\n".join(terminal_lines(lessons, args.out / CLASS_REPORT)))
    return 0
