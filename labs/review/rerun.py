"""Watch mode: rerun the self-checks whenever a file of the tree changes.

File events come from watchfiles where the platform gives them; where it
does not (watchfiles missing, a network drive, inotify exhausted), the tree
is polled for changed modification times instead. The checks run in a
subprocess with a timeout, so a learner's endless loop shows as a failed
check instead of freezing the watcher.

Single keys steer it (keys.py): h shows the next hint for the first failing
check, r reruns the checks, q quits. The first failing check is laid out as
`labs check` lays it out (layout.py).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from labs.checking.checks import CHECKS
from labs.checking.protocol import StoreKind
from labs.checking.report import Report
from labs.grading.results import score_lines
from labs.term.i18n import N_, _
from labs.term.layout import failure_lines, terminal_width, wrapped
from labs.trees.regions import IGNORED_DIRS, source_files

from . import self_total
from .hints import hint_lines, tier_to_show
from .progress import Runner, error_lines, failing, fresh_report, score
from .texts import message

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
        changed = {Path(path).relative_to(root).as_posix() for _change, path in changes}
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
    """How this machine can watch the tree (in English: show it with _()), and the changes."""
    if not poll:
        try:
            import watchfiles  # noqa: F401
        except ImportError:
            pass
        else:
            return N_("file events"), event_changes(root, stop)
    return N_("polling every 0.5 s"), poll_changes(root, stop)


def summary_lines(tree: str, report: Report, width: int | None = None) -> list[str]:
    """n/6 with a bar, then the first failing check laid out as `labs check` lays it out."""
    titles = {check.number: _(check.title) for check in CHECKS}
    left = failing(report)
    lines = [f"[{time.strftime('%H:%M:%S')}] {score(tree, report)}"]
    if report.error:
        return lines + error_lines(report.error, "    ", width)
    if not left:
        done = _("all six pass: done. Next, the same checks on Postgres (see the README).")
        return lines + wrapped(done, "  ", width)
    first = left[0]
    heading = _("next: check {number}: {title}").format(number=first, title=titles[first])
    lines += wrapped(heading, "  ", width, "    ")
    result = next((r for r in report.six if r.number == first), None)
    if result is not None:
        lines += failure_lines(result, "    ", width)
    return lines


def next_hint(root: Path, report: Report, width: int | None = None) -> list[str]:
    """The next tier of hints for the first failing check, or a word that none is needed."""

    left = failing(report)
    if not left:
        return [message("watch", "no_hint_needed")]
    titles = {check.number: _(check.title) for check in CHECKS}
    number = left[0]
    tier = tier_to_show(root, number)
    title = titles.get(number, "")
    return hint_lines(root, number, tier, title, next_label="next_key", width=width)


def watch_tree(
    root: Path,
    tree: str,
    out: TextIO,
    stop: threading.Event,
    *,
    poll: bool = False,
    timeout: float = 10.0,
    run: Runner | None = None,
    keys: TextIO | None = None,
) -> str:
    """Run the checks now, after every change and on r, until q or stop; return the watch mode.

    A run whose result is the same as the last one printed says so in one
    line instead of printing the same block again. The checks' block comes
    first; the points (with the grader's own verdicts on the rest, which may
    take longer) follow when they are ready.
    """
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    last: dict[str, object] = {
        "report": Report(tree, StoreKind.MEMORY, []),
        "block": None,
        "points": None,
    }

    def say(lines: list[str]) -> None:
        print("\n".join(lines), file=out, flush=True)

    def check_now() -> None:
        others = self_total.start(root)  # the grader's verdicts on the rest, for the total
        report = fresh_report(root, run, timeout)
        width = terminal_width(out)
        lines = summary_lines(tree, report, width)
        block = (lines[0].partition("] ")[2], *lines[1:])
        if block == last["block"]:
            stamp = lines[0].partition("]")[0] + "]"
            say([message("watch", "unchanged", stamp=stamp, tree=tree)])
        else:
            say(lines)  # at once: the grader's verdicts (Postgres, say) may take longer
        points = score_lines({StoreKind.MEMORY: report}, tree, width, others.result())
        if block != last["block"] or points != last["points"]:
            say(points)
        last.update(report=report, block=block, points=points)

    def pump(kind: str, stream: Iterator[object]) -> None:
        for item in stream:
            events.put((kind, item))
            if stop.is_set():
                return
        events.put((f"{kind}-ended", None))

    mode, stream = changes(root, stop, poll=poll)
    check_now()
    say([_("watching {tree} for changes ({mode}); Ctrl-C to stop").format(tree=tree, mode=_(mode))])
    threading.Thread(target=pump, args=("changed", stream), daemon=True).start()
    if keys is not None:
        say([message("watch", "keys")])
        threading.Thread(
            target=pump, args=("key", iter(lambda: keys.read(1), "")), daemon=True
        ).start()
    while not stop.is_set():
        try:
            kind, value = events.get(timeout=0.2)
        except queue.Empty:
            continue
        if kind == "changed":
            assert isinstance(value, set)
            say([_("changed: {files}").format(files=", ".join(sorted(value)))])
            check_now()
        elif kind == "changed-ended":
            break
        elif kind == "key" and value == "q":
            stop.set()
        elif kind == "key" and value == "r":
            check_now()
        elif kind == "key" and value == "h":
            report = last["report"]
            assert isinstance(report, Report)
            say(next_hint(root, report, terminal_width(out)))
    return mode
