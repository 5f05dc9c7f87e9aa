"""The kit's modules import each other in one direction: no module of labs/ imports one that
imports it back, wherever the import stands (inside a function, or for type checking only)."""

from __future__ import annotations

from labs.trees.finding import REPO_ROOT
from tests.support.imports import cycles, import_graph

LABS = REPO_ROOT / "labs"


def test_the_graph_sees_imports_at_the_top_in_functions_and_for_typing() -> None:
    """The reader of imports works on samples it must see, of each kind."""
    graph = import_graph(LABS)
    assert "labs.checking.protocol" in graph["labs.checking.host"]  # from .protocol import
    assert "labs.checking.host" in graph["labs.checking.launch"]  # in the forked child only
    assert "labs.grading.grader" in graph["labs.grading.plugin"]  # under TYPE_CHECKING
    assert "labs.checking.checks.intake" in graph["labs.checking.checks"]  # from . import intake


def test_the_cycle_finder_finds_a_cycle_it_is_shown() -> None:
    """A graph with a circle through three modules is reported, in its order."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_no_kit_module_imports_one_that_imports_it_back() -> None:
    """No import cycles anywhere in labs/, packages' __init__ modules included."""
    assert cycles(import_graph(LABS)) == []
