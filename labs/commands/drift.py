"""python -m labs drift: check that starter and solution differ only inside the regions."""

from __future__ import annotations

import argparse

from labs.grading.drift import behaviour_drift
from labs.term.i18n import _
from labs.trees.drift import tree_drift
from labs.trees.finding import tree_root


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the drift command."""
    parser = commands.add_parser(
        "drift",
        help=_("guard: starter and solution differ only inside the marked regions"),
        description=_(
            "Compare starter and solution outside the TODO/SOLUTION regions "
            "(caches and generated files ignored), check that every region has its "
            "counterpart, and that the starter fails exactly the checks its regions serve "
            "while the solution passes all six. Exit 1 on any drift."
        ),
    )
    parser.add_argument("--starter", default="starter", help=_("starter tree (name or path)"))
    parser.add_argument("--solution", default="solution", help=_("solution tree (name or path)"))
    parser.add_argument(
        "--no-checks",
        action="store_true",
        help=_("compare the files only; do not run the six checks"),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print each drift as file:line and what is wrong; exit 0 only when there is none."""
    report = tree_drift(tree_root(args.starter), tree_root(args.solution))
    drift = list(report.drift)
    if not args.no_checks and report.ok:
        drift.extend(behaviour_drift(args.starter, args.solution))
    for item in drift:
        print(_("drift: {drift}").format(drift=item))
    for note in report.notes:
        print(_("note:  {note}").format(note=note))
    # One sentence for one drift, another for more (Chinese says both the same way).
    if len(drift) == 1:
        print(_("1 drift found"))
        return 1
    if drift:
        print(_("{count} drifts found").format(count=len(drift)))
        return 1
    print(_("no drift: the trees differ only inside the marked regions"))
    return 0
