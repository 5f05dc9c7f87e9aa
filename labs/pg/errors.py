"""The errors of labs.pg: a catalog that cannot be read, a database that cannot be made,
tables that are not the plain tables the lesson has."""

from __future__ import annotations


class CatalogError(Exception):
    """The database could not be read (unreachable, or the URL is wrong)."""


class ScratchDatabaseError(Exception):
    """No database could be made: no server given and none installed, or no rights."""


class NotPlainTablesError(Exception):
    """What should be the lesson's plain tables is something that could run code or hide rows.

    `problems` names each thing found, e.g. "a view where the lesson has the table runs".
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems
