"""Watch mode: rerun the self-checks whenever a file of the tree changes.

File events come from watchfiles where the platform gives them; where it
does not (watchfiles missing, a network drive, inotify exhausted), the tree
is polled for changed modification times instead. The checks run in a
subprocess with a timeout, so a learner's endless loop shows as a failed
check instead of freezing the watcher.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from .checks import CHECKS
from .grading.criteria import Outcome
from .grading.isolate import check_outcomes
from .regions import IGNORED_DIRS, source_files

Snapshot = dict[str, tuple[float, int]]


def snapshot(root: Path) -> Snapshot:
    """Modification time and size of every source file of the tree."""
    found: Snapshot = {}
    for relative in source_files(root):
        try:
            stat = (root / relative).stat()
        except OSError:  # deleted between listing and stat: the next poll sees it
            continue
        found[relative] = (stat.st_mtime, stat.st_size)
    return found


def poll_changes(root: Path, stop: threading.Event, interval: float = 0.5) -> Iterator[set[str]]:
    """Yield the files changed since the last look, checking every interval seconds."""
    before = snapshot(root)
    while not stop.wait(interval):
        after = snapshot(root)
        changed = {
            path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
        }
        before = after
        if changed:
            yield changed


def event_changes(root: Path, stop: threading.Event) -> Iterator[set[str]]:
    """Yield changed files as the operating system reports them (watchfiles)."""
    from watchfiles import watch

    for changes in watch(root, stop_event=stop, raise_interrupt=True):
        changed = {Path(path).relative_to(root).as_posix() for _, path in changes}
        # Editors and tools write temporary files beside the real ones: only Python counts.
        relevant = {
            path
            for path in changed
            if path.endswith(".py") and not IGNORED_DIRS.intersection(path.split("/"))
        }
        if relevant:
            yield relevant


def changes(
    root: Path, stop: threading.Event, *, poll: bool = False
) -> tuple[str, Iterator[set[str]]]:
    """The way this machine can watch the tree, and the stream of changes it gives."""
    if not poll:
        try:
            import watchfiles  # noqa: F401
        except ImportError:
            pass
        else:
            return "file events", event_changes(root, stop)
    return "polling every 0.5 s", poll_changes(root, stop)


def summary_lines(tree: str, outcomes: dict[int, Outcome]) -> list[str]:
    """n/6 with a bar, then the first failing check with what it wanted and its hint."""
    titles = {check.number: check.title for check in CHECKS}
    passed = sum(o.passed for o in outcomes.values())
    bar = "#" * passed + "." * (len(titles) - passed)
    lines = [f"[{time.strftime('%H:%M:%S')}] {tree}: [{bar}] {passed}/{len(titles)} checks pass"]
    failing = [n for n in sorted(outcomes) if not outcomes[n].passed]
    if failing:
        first = failing[0]
        lines.append(f"  next: check {first}: {titles.get(first, '')}")
        lines.extend(f"    {line}" for line in outcomes[first].message.splitlines())
    else:
        lines.append("  all six pass: done. Next, the same checks on Postgres (see the README).")
    return lines


def watch_tree(
    root: Path,
    tree: str,
    out: TextIO,
    stop: threading.Event,
    *,
    poll: bool = False,
    timeout: float = 10.0,
    run: Callable[[Path], dict[int, Outcome]] | None = None,
) -> str:
    """Run the checks now and after every change until stop is set; return the watch mode."""

    def check_now() -> None:
        outcomes = (run or (lambda path: check_outcomes(path, timeout=timeout)))(root)
        print("\n".join(summary_lines(tree, outcomes)), file=out, flush=True)

    mode, stream = changes(root, stop, poll=poll)
    check_now()
    print(f"watching {tree} for changes ({mode}); Ctrl-C to stop", file=out, flush=True)
    for changed in stream:
        print(f"changed: {', '.join(sorted(changed))}", file=out, flush=True)
        check_now()
    return mode
