"""The two uniquenesses the lesson asks the database to enforce, and the check each serves.

One row per idempotency key (check 3) and one message per (run, seq) (check
5): the database view reports them, and grading judges a migration by them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Uniqueness:
    """A uniqueness on exactly these columns of this table."""

    table: str
    columns: tuple[str, ...]
    check: int  # the self-check it serves
    label: str  # how a grade names it

    def on(self, table: str, columns: tuple[str, ...] | list[str]) -> bool:
        """Whether a constraint on table (schema-qualified or not) covers exactly these columns."""
        return table.rpartition(".")[2] == self.table and set(columns) == set(self.columns)


UNIQUENESSES = (
    Uniqueness("runs", ("idempotency_key",), 3, "runs.idempotency_key"),
    Uniqueness("messages", ("run_id", "seq"), 5, "messages (run_id, seq)"),
)
