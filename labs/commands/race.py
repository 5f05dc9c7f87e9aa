"""python -m labs race: check-then-insert against the unique constraint, side by side."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import psycopg2
import wcwidth

from labs.lesson.race import (
    MAX_DELAY_MS,
    MAX_REQUESTS,
    MIN_REQUESTS,
    PathOutcome,
    RaceOutcome,
    run_race,
)
from labs.pg.catalog import psycopg2_url
from labs.pg.scratch import ScratchDatabaseError, scratch_database
from labs.term.columns import wrap
from labs.term.i18n import _

# The table's widths in terminal columns: the row labels, then each path's column. A longer
# translation widens them; a Chinese character takes two columns, so they are measured with
# wcwidth, never with len().
LABEL_WIDTH, PATH_WIDTH = 28, 34
# The closing paragraphs are wrapped to this many terminal columns.
TEXT_WIDTH = 88


def within(low: float, high: float, kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: a number of `kind` from low to high, or an error argparse names."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                _("{text} is not a number").format(text=repr(text))
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                _("must be from {low} to {high}, got {text}").format(
                    low=f"{low:g}", high=f"{high:g}", text=text
                )
            )
        return value

    return parse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the race command."""
    parser = commands.add_parser(
        "race",
        help=_("show check-then-insert losing a race the unique constraint wins"),
        description=_(
            "Send the same create-run request from many connections at once, "
            "against a naive check-then-insert on a table without a unique constraint and "
            "against INSERT ... ON CONFLICT on a table with one, and count the rows each leaves."
        ),
    )
    parser.add_argument(
        "--naive",
        action="store_true",
        help=_("run only the naive path (default: both, side by side)"),
    )
    parser.add_argument(
        "--delay-ms",
        type=within(0, MAX_DELAY_MS, float),
        default=20.0,
        metavar="N",
        help=_(
            "pause between the check and the insert, holding the race window open so the "
            "outcome repeats (0 to {most}; default 20; 0 = no pause)"
        ).format(most=MAX_DELAY_MS),
    )
    parser.add_argument(
        "--requests",
        type=within(MIN_REQUESTS, MAX_REQUESTS, int),
        default=32,
        metavar="N",
        help=_(
            "concurrent identical requests, one connection each ({fewest} to {most}; default 32)"
        ).format(fewest=MIN_REQUESTS, most=MAX_REQUESTS),
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_(
            "Postgres database for the demo tables (default: $DATABASE_URL; "
            "without one, a throwaway local cluster is started)"
        ),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the race and print both outcomes; exit 1 if the constraint path duplicated."""
    requests, delay_ms = int(args.requests), float(args.delay_ms)
    try:
        if args.database_url:
            psycopg2_url(args.database_url)  # says "not Postgres" plainly, not libpq's dsn error
            outcome = run_race(args.database_url, requests, delay_ms, guarded=not args.naive)
        else:
            print(_("no --database-url: starting a throwaway Postgres cluster ..."))
            with scratch_database(None, "race") as url:
                outcome = run_race(url, requests, delay_ms, guarded=not args.naive)
    except (ScratchDatabaseError, ValueError) as error:
        print(_("error: {error}").format(error=error), file=sys.stderr)
        return 2
    except psycopg2.Error as error:  # down, wrong URL or password, out of connections
        print(
            _("error: the race could not run on Postgres: {problem}").format(
                problem=database_problem(error)
            ),
            file=sys.stderr,
        )
        return 2
    print(format_outcome(outcome))
    return 0 if outcome.guarded is None or outcome.guarded.rows == 1 else 1


def database_problem(error: psycopg2.Error) -> str:
    """libpq's first line, and what to try, in one line."""
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if any(s in reason for s in ("connection slots", "too many clients", "too many connections")):
        return _("{reason} (each request holds a connection: try fewer --requests)").format(
            reason=reason
        )
    if isinstance(error, psycopg2.OperationalError):
        return _(
            "{reason} (is Postgres running, and is --database-url or DATABASE_URL right?)"
        ).format(reason=reason)
    return reason


def format_outcome(outcome: RaceOutcome) -> str:
    """Both paths as columns: rows for the key, distinct runIds answered, verdict."""
    paths = [p for p in (outcome.naive, outcome.guarded) if p is not None]
    if outcome.delay_ms:
        load = _(
            "{requests} concurrent identical requests, one idempotency key, "
            "{delay} ms pause between check and insert (--delay-ms)"
        )
    else:
        load = _(
            "{requests} concurrent identical requests, one idempotency key, "
            "no pause between check and insert (--delay-ms)"
        )
    table = [
        ("", [_(p.path) for p in paths]),
        (_("rows holding the key"), [str(p.rows) for p in paths]),
        (_("different runIds answered"), [str(p.distinct_run_ids) for p in paths]),
        (_("outcome"), [verdict(p) for p in paths]),
    ]
    lines = [load.format(requests=outcome.requests, delay=f"{outcome.delay_ms:g}"), ""]
    lines += lined_up(table)
    lines.append("")
    for paragraph in closing(outcome):
        lines += wrapped(paragraph)
    return "\n".join(lines)


def verdict(path: PathOutcome) -> str:
    """One path's outcome in a few words: how many rows too many, if any."""
    if not path.duplicates:
        return _("one run, no duplicates")
    if path.duplicates == 1:
        return _("{count} duplicate row").format(count=path.duplicates)
    return _("{count} duplicate rows").format(count=path.duplicates)


def lined_up(table: list[tuple[str, list[str]]]) -> list[str]:
    """Rows of (label, cells): labels padded on the right, cells on the left, by display width.

    The columns widen when a label or a cell needs more room, so every cell of a column
    ends at the same terminal column in any language.
    """
    label_width = max(LABEL_WIDTH, *(wcwidth.width(label) + 2 for label, _cells in table))
    cell_width = max(
        PATH_WIDTH, *(wcwidth.width(cell) + 2 for _label, cells in table for cell in cells)
    )
    return [
        wcwidth.ljust(label, label_width)
        + "".join(wcwidth.rjust(cell, cell_width) for cell in cells)
        for label, cells in table
    ]


def wrapped(paragraph: str) -> list[str]:
    """A paragraph as terminal lines of at most TEXT_WIDTH columns, measured by display width.

    The English text carries its own line breaks, which are kept. A translation may be one
    long line: it is broken between words or between two Chinese characters.
    """
    return [
        shown for written in paragraph.splitlines() for shown in wrap(written, TEXT_WIDTH) or [""]
    ]


def closing(outcome: RaceOutcome) -> list[str]:
    """What the numbers mean, for the paths and the pause that were actually run: paragraphs."""
    if outcome.delay_ms:
        said = _(
            "The pause holds the window between SELECT and INSERT open, so the naive path\n"
            "loses every time; with --delay-ms 0 it still loses, only less predictably."
        )
    else:
        said = _(
            "With no pause the window between SELECT and INSERT is only a round trip wide,\n"
            "so the naive path loses less predictably; --delay-ms 20 holds it open."
        )
    if outcome.guarded is None:
        return [
            said,
            _("Run without --naive to see the unique constraint keep one row under the same load."),
        ]
    if outcome.delay_ms:
        return [
            said,
            _(
                "The constraint path takes the same pause and still ends with one row: "
                "the database,\nnot the check, decides."
            ),
        ]
    return [
        said,
        _(
            "The constraint path runs under the same load and still ends with one row: "
            "the database,\nnot the check, decides."
        ),
    ]
