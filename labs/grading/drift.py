"""The drift guard's third promise: the starter fails exactly the checks its regions serve, and
the solution passes all six.

The first two (outside the regions the trees are identical; each TODO region
has its SOLUTION counterpart) compare files and live with the trees
(labs/trees/drift.py); this one runs the checks.
"""

from __future__ import annotations

from labs.checking.runner import run_checks
from labs.trees.drift import Drift
from labs.trees.finding import tree_root
from labs.trees.regions import checks_served


def behaviour_drift(starter: str = "starter", solution: str = "solution") -> list[Drift]:
    """The starter must fail exactly the checks its regions serve; the solution pass all six."""
    expected_failing = checks_served(tree_root(starter))
    found: list[Drift] = []
    for spec, should_fail in ((starter, expected_failing), (solution, set())):
        report = run_checks(spec)
        if report.error:
            found.append(Drift(f"{spec}/", f"the checks could not run: {report.error}"))
            continue
        failing = {int(r.key) for r in report.six if not r.passed}
        if failing != should_fail:
            found.append(
                Drift(
                    f"{spec}/",
                    f"fails checks {sorted(failing) or 'none'}, "
                    f"expected {sorted(should_fail) or 'none'}",
                )
            )
    return found
