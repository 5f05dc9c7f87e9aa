"""What a program outside this package uses of it: what a database's catalog says of the
lab's tables, and the migrations a tree has.

    the catalog       constraints_report, required_constraints, CatalogEntry, Requirement,
                      CatalogError (the catalog could not be read)
    the migrations    latest_migration (a tree's newest), migration_head (the database's)
    connecting        psycopg2_url (a SQLAlchemy URL as psycopg2 takes it)
"""

from __future__ import annotations

from .catalog import (
    CatalogEntry,
    CatalogError,
    Requirement,
    constraints_report,
    latest_migration,
    migration_head,
    psycopg2_url,
    required_constraints,
)

__all__ = [
    "CatalogEntry",
    "CatalogError",
    "Requirement",
    "constraints_report",
    "latest_migration",
    "migration_head",
    "psycopg2_url",
    "required_constraints",
]
