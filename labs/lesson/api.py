"""What a program outside this package uses of it beyond the state machine, which the package
itself exports (it imports nothing): the race, which brings psycopg2 with it.

    run_race       check-then-insert against the unique constraint, on Postgres
    RaceOutcome    what both paths did; PathOutcome, what one did
"""

from __future__ import annotations

from .race import PathOutcome, RaceOutcome, run_race

__all__ = ["PathOutcome", "RaceOutcome", "run_race"]
