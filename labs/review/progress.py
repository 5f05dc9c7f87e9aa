"""Where a learner stands: the six checks run afresh on memory, and the next TODO to edit.

`labs watch`, `labs list` and `labs hint` (without a number) share this. The
checks run as `labs check` runs them, in a process of their own with a time
limit per check, so an endless loop in the tree is a failed check. A file that
does not parse is named first, with its folder and line, without starting the
checks: that is quicker, and clearer than an import error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from labs.checking.checks import CHECKS
from labs.checking.protocol import StoreKind
from labs.checking.report import Report
from labs.checking.runner import run_checks
from labs.term.i18n import _
from labs.term.layout import wrapped
from labs.trees.regions import source_files

from .hints import Place, markers, places
from .texts import message

Runner = Callable[[Path], Report]
SHORT_FILE = re.compile(r"\(([\w.-]+\.py), line (\d+)\)")
MARKED = re.compile(r"TODO\(check \d\)")


def run_six(root: Path, timeout: float = 10.0) -> Report:
    """The six checks on the in-memory store, each with timeout seconds to finish."""
    return run_checks(root, StoreKind.MEMORY, check_timeout=timeout, start_timeout=timeout)


def syntax_report(root: Path) -> Report | None:
    """A report that could not run, naming the first file that does not parse; None if all do.

    It names the file with its folder and line, and puts a caret under the fault.
    """
    for relative in source_files(root):
        if not relative.endswith(".py"):
            continue
        try:
            source = (root / relative).read_bytes()
            compile(source, relative, "exec", dont_inherit=True)
        except OSError:  # deleted while we looked: the next change event reruns
            continue
        except SyntaxError as error:
            lines = [
                message(
                    "watch",
                    "does_not_parse",
                    path=relative,
                    kind=type(error).__name__,
                    problem=error.msg,
                    line=error.lineno,
                )
            ]
            if error.text:
                where = f"  {relative}:{error.lineno}:  "
                lines.append(where + error.text.rstrip())
                if error.offset:
                    lines.append(" " * (len(where) + error.offset - 1) + "^")
            return Report(root.name, StoreKind.MEMORY, [], error="\n".join(lines))
        except ValueError as error:  # a null byte, an undecodable file
            said = message("watch", "does_not_decode", path=relative, problem=error)
            return Report(root.name, StoreKind.MEMORY, [], error=said)
    return None


def with_folders(text: str, root: Path) -> str:
    """Write "(keys.py, line 3)" as "(shared/keys.py, line 3)" when one file has that name."""
    files = [f for f in source_files(root) if f.endswith(".py")]

    def widen(match: re.Match[str]) -> str:
        same = [f for f in files if Path(f).name == match[1]]
        return f"({same[0]}, line {match[2]})" if len(same) == 1 else match[0]

    return SHORT_FILE.sub(widen, text)


def fresh_report(root: Path, run: Runner | None = None, timeout: float = 10.0) -> Report:
    """The tree's six checks now: a file that does not parse, else a run of the checks."""
    found = syntax_report(root)
    if found is not None:
        return found
    report = run(root) if run is not None else run_six(root, timeout)
    results = [
        replace(r, expected=with_folders(r.expected, root), got=with_folders(r.got, root))
        for r in report.results
    ]
    return replace(report, results=results, error=with_folders(report.error, root))


def failing(report: Report) -> list[int]:
    """The numbers of the six checks that did not pass (all six when none could run)."""
    passed = set() if report.error else {r.number for r in report.six if r.passed}
    return [check.number for check in CHECKS if check.number not in passed]


def score(tree: str, report: Report) -> str:
    """n/6 with a bar: "starter: [###...] 3/6 checks pass"."""
    left = failing(report)
    passed = len(CHECKS) - len(left)
    return _("{tree}: [{bar}] {passed}/{total} checks pass").format(
        tree=tree, bar="#" * passed + "." * len(left), passed=passed, total=len(CHECKS)
    )


def error_lines(error: str, indent: str, width: int | None) -> list[str]:
    """Why the checks could not run: the sentence wrapped, the lines after it (code) as they are."""
    first, *rest = error.split("\n")
    return wrapped(first, indent, width) + [indent + line for line in rest]


def next_todo(root: Path, report: Report) -> Place | None:
    """The place to edit next: in the first failing check, the TODO its failure names.

    When the failure names no TODO marker (a check without one, or a marker the
    learner deleted), the check's first TODO region in the tree, else the first
    place its hints point at. None when all six pass or none could run.
    """
    left = failing(report)
    if not left or report.error:
        return None
    number = left[0]
    result = next((r for r in report.six if r.number == number), None)
    hint = result.hint if result is not None else None
    if hint is not None and MARKED.match(hint.text):
        return Place(hint.path, hint.line, hint.text)  # the path already as the learner types it
    found = markers(root, number) or places(root, number)
    return found[0] if found else None
