"""The kit's modules import each other in one direction: no module of labs/ imports one that
imports it back, wherever the import stands (inside a function, or for type checking only),
and its packages stand in layers, each importing only those below it."""

from __future__ import annotations

from labs.trees.finding import REPO_ROOT
from tests.support.imports import cycles, import_graph, package_of, reaches_into, upward_imports

LABS = REPO_ROOT / "labs"
# The kit's packages from the bottom up; a package imports only those before it in this order.
LAYERS = (
    # Text: the learner's language, columns, layout, single keys, and the kit's version.
    ("version", "term"),
    # What the checks stand on: trees and their regions, untrusted text, the lesson, Postgres.
    ("untrusted", "trees", "lesson", "pg"),
    # The checks, the sandbox they run in for grading, the benchmark, and grading itself.
    ("checking", "sandbox", "bench", "grading"),
    # The learner's loop (watch, progress, hints, the self-check's total) and the doctor.
    ("doctor", "review"),
    # The commands with their command line, then the dashboard.
    ("commands", "__main__", "web"),
)
ORDER = [package for layer in LAYERS for package in layer]
# The dashboard uses each package of the kit through its public face: the package itself, its
# api module, and these. The text layer's modules are all public: every package speaks with them.
# The trees' diff shows the solution, so the learners' release leaves it out, and the diff view
# with it: it is imported by name, by that view alone, never through labs.trees.api.
PUBLIC = {
    "labs.term.i18n",
    "labs.term.columns",
    "labs.term.layout",
    "labs.term.keys",
    "labs.trees.diff",
}


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


def test_the_layer_rule_reports_an_import_from_below_and_a_package_it_does_not_know() -> None:
    """An arrow up the order, and one from a package not in it, are named; arrows down are not."""
    graph = {
        "labs.term.i18n": {"labs.checking.runner"},
        "labs.checking.runner": {"labs.term.i18n", "labs.checking.report"},
        "labs.checking.report": set(),
        "labs.newcomer.thing": {"labs.term.i18n"},
    }
    order = ["term", "checking"]
    assert upward_imports(graph, order) == [
        ("labs.newcomer.thing", "labs.term.i18n"),
        ("labs.term.i18n", "labs.checking.runner"),
    ]


def test_every_package_of_the_kit_and_the_dashboard_imports_only_packages_below_it() -> None:
    """labs/ and web/ read as layers: text, foundations, checks and grading, the learner's
    loop, then the commands and the dashboard; none imports a package above it."""
    graph = import_graph(LABS, REPO_ROOT / "web")
    del graph["labs"]  # the kit's root package: a docstring, importing nothing
    assert sorted({package_of(m) for m in graph}) == sorted(ORDER)
    assert upward_imports(graph, ORDER) == []


def test_the_text_layer_imports_nothing_else_of_the_kit() -> None:
    """labs/term (the language, columns, layout, keys) stands on the standard library alone."""
    graph = import_graph(LABS)
    arrows = {t for m, targets in graph.items() if package_of(m) == "term" for t in targets}
    assert {package_of(t) for t in arrows} <= {"term"}


def test_the_dashboard_uses_only_what_the_kits_packages_export() -> None:
    """web/ imports a package of the kit, its api module or the text layer, never the modules
    behind them, so those can be split or renamed without the dashboard noticing."""
    graph = import_graph(LABS, REPO_ROOT / "web")
    assert reaches_into(graph, "web", PUBLIC) == []


def test_the_public_face_rule_names_an_import_of_a_packages_inner_module() -> None:
    """An import of a module behind a package's api is named; the api, the package, the text
    layer and the dashboard's own modules are not."""
    graph = {
        "web.views.checks": {"labs.checking.runner", "labs.checking.api", "web.i18n"},
        "web.i18n": {"labs.term.i18n", "labs.lesson", "labs.version"},
        "labs.checking.api": {"labs.checking.runner"},
    }
    assert reaches_into(graph, "web", PUBLIC) == [("web.views.checks", "labs.checking.runner")]
