"""python -m labs race: check-then-insert against the unique constraint, side by side."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import psycopg2

from ..catalog import psycopg2_url
from ..race import MAX_DELAY_MS, MAX_REQUESTS, MIN_REQUESTS, RaceOutcome, run_race
from ..scratchdb import ScratchDatabaseError, scratch_database


def within(low: float, high: float, kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: a number of `kind` from low to high, or an error argparse names."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return value

    return parse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the race command."""
    parser = commands.add_parser(
        "race",
        help="show check-then-insert losing a race the unique constraint wins",
        description="Send the same create-run request from many connections at once, "
        "against a naive check-then-insert on a table without a unique constraint and "
        "against INSERT ... ON CONFLICT on a table with one, and count the rows each leaves.",
    )
    parser.add_argument(
        "--naive", action="store_true", help="run only the naive path (default: both, side by side)"
    )
    parser.add_argument(
        "--delay-ms",
        type=within(0, MAX_DELAY_MS, float),
        default=20.0,
        metavar="N",
        help="pause between the check and the insert, holding the race "
        f"window open so the outcome repeats (0 to {MAX_DELAY_MS}; default 20; 0 = no pause)",
    )
    parser.add_argument(
        "--requests",
        type=within(MIN_REQUESTS, MAX_REQUESTS, int),
        default=32,
        metavar="N",
        help=f"concurrent identical requests, one connection each "
        f"({MIN_REQUESTS} to {MAX_REQUESTS}; default 32)",
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help="Postgres database for the demo tables (default: $DATABASE_URL; "
        "without one, a throwaway local cluster is started)",
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
            print("no --database-url: starting a throwaway Postgres cluster ...")
            with scratch_database(None, "race") as url:
                outcome = run_race(url, requests, delay_ms, guarded=not args.naive)
    except (ScratchDatabaseError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except psycopg2.Error as error:  # down, wrong URL or password, out of connections
        print(
            f"error: the race could not run on Postgres: {database_problem(error)}", file=sys.stderr
        )
        return 2
    print(format_outcome(outcome))
    return 0 if outcome.guarded is None or outcome.guarded.rows == 1 else 1


def database_problem(error: psycopg2.Error) -> str:
    """libpq's first line, and what to try, in one line."""
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if any(s in reason for s in ("connection slots", "too many clients", "too many connections")):
        return f"{reason} (each request holds a connection: try fewer --requests)"
    if isinstance(error, psycopg2.OperationalError):
        return f"{reason} (is Postgres running, and is --database-url or DATABASE_URL right?)"
    return reason


def format_outcome(outcome: RaceOutcome) -> str:
    """Both paths as columns: rows for the key, distinct runIds answered, verdict."""
    paths = [p for p in (outcome.naive, outcome.guarded) if p is not None]
    pause = f"{outcome.delay_ms:g} ms pause" if outcome.delay_ms else "no pause"
    lines = [
        f"{outcome.requests} concurrent identical requests, one idempotency key, "
        f"{pause} between check and insert (--delay-ms)",
        "",
    ]
    lines.append(f"{'':28}" + "".join(f"{p.path:>34}" for p in paths))
    lines.append(f"{'rows holding the key':28}" + "".join(f"{p.rows:>34}" for p in paths))
    lines.append(
        f"{'different runIds answered':28}" + "".join(f"{p.distinct_run_ids:>34}" for p in paths)
    )
    verdicts = [
        f"{p.duplicates} duplicate rows" if p.duplicates else "one run, no duplicates"
        for p in paths
    ]
    lines.append(f"{'outcome':28}" + "".join(f"{v:>34}" for v in verdicts))
    return "\n".join([*lines, "", *closing(outcome)])


def closing(outcome: RaceOutcome) -> list[str]:
    """What the numbers mean, for the paths and the pause that were actually run."""
    if outcome.delay_ms:
        said = [
            "The pause holds the window between SELECT and INSERT open, so the naive path",
            "loses every time; with --delay-ms 0 it still loses, only less predictably.",
        ]
    else:
        said = [
            "With no pause the window between SELECT and INSERT is only a round trip wide,",
            "so the naive path loses less predictably; --delay-ms 20 holds it open.",
        ]
    if outcome.guarded is None:
        return [
            *said,
            "Run without --naive to see the unique constraint keep one row under the same load.",
        ]
    both = "takes the same pause" if outcome.delay_ms else "runs under the same load"
    return [
        *said,
        f"The constraint path {both} and still ends with one row: the database,",
        "not the check, decides.",
    ]
