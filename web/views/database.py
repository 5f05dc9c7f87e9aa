"""The database view (Postgres only): constraints, indexes and migration head per tree."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from labs.trees import load_tree

from ..lab import lab
from ..pg_catalog import describe
from ..render import render_view

bp = Blueprint("database", __name__, url_prefix="/database")


def _schema_of(spec: str) -> str:
    """Each tree keeps its tables in a schema named after its package."""
    try:
        return load_tree(spec).package
    except Exception:  # a tree that does not import still has a name
        return spec


def database_context() -> dict[str, Any]:
    """Per tree, what Postgres reports; or why there is nothing to report."""
    the_lab = lab()
    if not the_lab.database_url:
        return {"configured": False, "reports": [], "error": ""}
    trees = {name: _schema_of(spec) for name, spec in the_lab.trees.items()}
    try:
        reports = describe(the_lab.database_url, list(trees.values()))
    except Exception as error:  # database down or URL wrong: a notice, not a traceback
        return {"configured": True, "reports": [],
                "error": f"could not read the catalog: {type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else ''}"}
    return {"configured": True, "error": "",
            "reports": list(zip(trees, reports, strict=True))}


@bp.get("")
def page() -> Response:
    """Constraints and indexes as Postgres reports them."""
    return render_view("database.html", "partials/database_body.html", database_context())
