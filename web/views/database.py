"""The database view (Postgres only): per tree, what the catalog holds and which migration.

Everything shown comes from labs/pg/catalog.py, the same reading the
`python -m labs constraints` command prints, so the page and the command
never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response

from labs.pg.api import (
    CatalogEntry,
    CatalogError,
    Requirement,
    constraints_report,
    latest_migration,
    migration_head,
    required_constraints,
)
from labs.term.i18n import N_
from labs.trees.api import find_tree

from ..lab import lab
from ..rendering.fragments import render_view

bp = Blueprint("database", __name__, url_prefix="/database")
# The kinds labs/pg/catalog.py gives an entry, marked so the page can show them translated.
ENTRY_KINDS = (
    N_("primary key"),
    N_("unique constraint"),
    N_("unique index"),
    N_("index"),
    N_("unique index (partial)"),
    N_("index (partial)"),
)


@dataclass(frozen=True)
class TreeCatalog:
    """One tree's schema as Postgres reports it, beside the tree's migration files."""

    tree: str
    schema: str
    entries: list[CatalogEntry]
    requirements: list[Requirement]
    head: str | None  # the revision alembic_version records in the database
    latest: str | None  # the newest migration file of the tree
    latest_error: str  # why the migration files could not be read, if they could not

    @property
    def migrated(self) -> bool:
        """True when the schema holds at least one of the lab's tables."""
        return bool(self.entries)

    @property
    def complete(self) -> bool:
        """True when Postgres enforces both uniquenesses the lab needs."""
        return all(need.present for need in self.requirements)

    @property
    def up_to_date(self) -> bool:
        """True when the database is at the newest migration file."""
        return self.head is not None and self.head == self.latest

    def serves(self, entry: CatalogEntry) -> int | None:
        """The check whose required uniqueness this entry provides, if any."""
        return next(
            (
                need.check
                for need in self.requirements
                if need.met_by == entry.name and need.table == entry.table
            ),
            None,
        )


def _schema_of(spec: str) -> str:
    """Each tree keeps its tables in a schema named after its package."""
    try:
        return find_tree(spec).package  # found, never imported
    except Exception:  # a folder that is not a tree still has a name
        return spec


def _latest_file(tree: str) -> tuple[str | None, str]:
    """The tree's newest migration file, or why its migrations folder cannot be read."""
    try:
        return latest_migration(tree), ""
    except Exception as error:  # a learner's migration file may not even import
        first_line = (str(error).strip().splitlines() or [""])[0]
        return None, f"{type(error).__name__}: {first_line}"


def read_tree(database_url: str, tree: str, spec: str) -> TreeCatalog:
    """Ask Postgres about one tree's schema; raises CatalogError if it does not answer."""
    schema = _schema_of(spec)
    entries = constraints_report(database_url, schema)
    latest, latest_error = _latest_file(tree)
    return TreeCatalog(
        tree,
        schema,
        entries,
        required_constraints(entries),
        migration_head(database_url, schema),
        latest,
        latest_error,
    )


def database_context() -> dict[str, Any]:
    """Per tree, what Postgres reports; or why there is nothing to report."""
    the_lab = lab()
    if not the_lab.database_url:
        return {"configured": False, "catalogs": [], "error": ""}
    try:
        catalogs = [
            read_tree(the_lab.database_url, tree, spec) for tree, spec in the_lab.trees.items()
        ]
    except CatalogError as error:  # database down or URL wrong: a notice, not a traceback
        return {"configured": True, "catalogs": [], "error": str(error)}
    return {"configured": True, "catalogs": catalogs, "error": ""}


@bp.get("")
def page() -> Response:
    """Constraints, indexes and migrations as Postgres reports them."""
    return render_view("database.html", "partials/database_body.html", database_context())
