"""Which Postgres a grading run grades on: the grader's own cluster, or DATABASE_URL's server.

LAB_POSTGRES, or the `--postgres` (labs grade) and `--lab-postgres` (the
pytest entry) options, say one of:

- `own`: a cluster of the grader's own (on_postgres_throwaway.py), each
  submission in a database of its own; it needs the PostgreSQL server
  binaries, and no privilege on anyone's server;
- `url`: DATABASE_URL's server, each submission in a database of its own
  there (on_postgres_url.py), which CREATEDB is enough for; a class also
  needs roles per submission (on_postgres_roles.py);
- `auto`, the default: `own` wherever the server binaries are installed,
  `url` elsewhere (and without DATABASE_URL either, Postgres is not graded).

So by default a learner whose DATABASE_URL names the README's role, or
compose's, grades on the same kind of server as the instructor's run, with
no grant asked of that role, and gets the same points.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum


class Choice(StrEnum):
    """Where an instructor asks a grading run to grade on Postgres."""

    AUTO = "auto"
    OWN = "own"
    URL = "url"


class Place(StrEnum):
    """Where a grading run grades on Postgres, once chosen."""

    URL = "url"  # DATABASE_URL's server
    OWN = "own"  # a cluster of the grader's own
    NONE = "none"  # nowhere: no server binaries, no DATABASE_URL


CHOICES = tuple(choice.value for choice in Choice)  # as the options list them
CHOICE_VARIABLE = "LAB_POSTGRES"


def chosen_choice(given: str | None = None, environ: Mapping[str, str] = os.environ) -> Choice:
    """The choice given (an option), else LAB_POSTGRES, else auto; ValueError when unknown."""
    choice = given or environ.get(CHOICE_VARIABLE) or Choice.AUTO
    if choice not in CHOICES:
        raise ValueError(
            f"{CHOICE_VARIABLE}={choice}: choose one of {', '.join(CHOICES)} "
            "(own: a Postgres cluster of the grader's own; url: DATABASE_URL's server)"
        )
    return Choice(choice)


def chosen_server(given: str | None = None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The server URL grading runs on, or None for the grader's own cluster (or none at all).

    ValueError for an unknown choice, or for `url` without DATABASE_URL.
    """
    choice = chosen_choice(given, environ)
    database_url = environ.get("DATABASE_URL") or None
    if choice is Choice.URL and database_url is None:
        raise ValueError(f"{CHOICE_VARIABLE}=url: set DATABASE_URL to the server to grade on")
    from labs.pg.cluster import find_bindir  # psycopg2 loads only where a grade is made

    if choice is Choice.OWN or (choice is Choice.AUTO and find_bindir() is not None):
        return None
    return database_url


def grading_place(database_url: str | None) -> Place:
    """Where a run given chosen_server's answer grades on Postgres."""
    if database_url:
        return Place.URL
    from labs.pg.cluster import find_bindir

    return Place.OWN if find_bindir() is not None else Place.NONE


# Why the Postgres criteria were not graded: no server to run them on.
NO_SERVER = (
    "no database configured: set DATABASE_URL, or install the PostgreSQL server binaries "
    "(e.g. `apt-get install postgresql`) for a cluster of the grader's own"
)
