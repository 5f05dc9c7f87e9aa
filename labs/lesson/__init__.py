"""The lesson's own facts and demonstrations, shared by checks, commands and dashboard.

states.py       the run state machine: RunStatus, the moves it allows, a way to each status
uniqueness.py   the two uniquenesses the lesson asks the database to enforce
race.py         check-then-insert against the unique constraint, raced on Postgres
learner_tests/  the tests a learner's repository runs with `pytest`

The state machine is exported here: it imports nothing, so every user can afford it.
race.py is imported by name, as it brings psycopg2 with it.
"""

from __future__ import annotations

from .states import LESSON_MOVES, PATHS, STATUSES, RunStatus, next_states, terminal

__all__ = ["LESSON_MOVES", "PATHS", "STATUSES", "RunStatus", "next_states", "terminal"]
