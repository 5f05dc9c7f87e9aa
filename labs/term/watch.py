"""Watch mode: rerun the self-checks whenever a file of the tree changes.

File events come from watchfiles where the platform gives them; where it
does not (watchfiles missing, a network drive, inotify exhausted), the tree
is polled for changed modification times instead. The checks run in a
subprocess with a timeout, so a learner's endless loop shows as a failed
check instead of freezing the watcher.

Single keys steer it: h shows the next hint for the first failing check, r
reruns the checks, q quits. The terminal is put in cbreak mode (keys arrive
without Enter) only when stdin is a terminal; from a pipe, keys are read as
they come.
"""

from __future__ import annotations

import contextlib
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from labs.checking.checks import CHECKS
from labs.grading.criteria import Outcome
from labs.grading.isolate import check_outcomes
from labs.review.texts import message
from labs.trees.regions import IGNORED_DIRS, source_files

from .i18n import N_, _

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


def summary_lines(tree: str, outcomes: dict[int, Outcome]) -> list[str]:
    """n/6 with a bar, then the first failing check with what it wanted and its hint."""
    titles = {check.number: _(check.title) for check in CHECKS}
    passed = sum(o.passed for o in outcomes.values())
    bar = "#" * passed + "." * (len(titles) - passed)
    score = _("{tree}: [{bar}] {passed}/{total} checks pass").format(
        tree=tree, bar=bar, passed=passed, total=len(titles)
    )
    lines = [f"[{time.strftime('%H:%M:%S')}] {score}"]
    failing = [n for n in sorted(outcomes) if not outcomes[n].passed]
    if failing:
        first = failing[0]
        lines.append(
            "  "
            + _("next: check {number}: {title}").format(number=first, title=titles.get(first, ""))
        )
        lines.extend(f"    {line}" for line in outcomes[first].message.splitlines())
    else:
        lines.append(
            "  " + _("all six pass: done. Next, the same checks on Postgres (see the README).")
        )
    return lines


def syntax_outcomes(root: Path) -> dict[int, Outcome] | None:
    """Six failed outcomes naming the first file that does not parse, or None when all parse.

    Compiling the tree here is quicker than starting the checks' process, and
    names the file with its folder, the line and a caret under the fault.
    """
    for relative in source_files(root):
        if not relative.endswith(".py"):
            continue
        try:
            source = (root / relative).read_bytes()
            compile(source, relative, "exec", dont_inherit=True)
        except OSError:  # deleted while we looked: the next change event reruns
            continue
        except (SyntaxError, ValueError) as error:
            if isinstance(error, SyntaxError):
                kind, problem = type(error).__name__, error.msg
                lines = [
                    message(
                        "watch",
                        "does_not_parse",
                        path=relative,
                        kind=kind,
                        problem=problem,
                        line=error.lineno,
                    )
                ]
                if error.text:
                    lines.append(f"  {relative}:{error.lineno}:  {error.text.rstrip()}")
                    if error.offset:
                        indent = len(f"  {relative}:{error.lineno}:  ") + error.offset - 1
                        lines.append(" " * indent + "^")
            else:
                lines = [message("watch", "does_not_decode", path=relative, problem=error)]
            said = "\n".join(lines)
            return {number: Outcome("fail", said) for number in range(1, 7)}
    return None


SHORT_FILE = re.compile(r"\(([\w.-]+\.py), line (\d+)\)")


def with_folders(message: str, root: Path) -> str:
    """Write "(keys.py, line 3)" as "(shared/keys.py, line 3)" when one file has that name."""
    files = [f for f in source_files(root) if f.endswith(".py")]

    def widen(match: re.Match[str]) -> str:
        same = [f for f in files if Path(f).name == match[1]]
        return f"({same[0]}, line {match[2]})" if len(same) == 1 else match[0]

    return SHORT_FILE.sub(widen, message)


@contextlib.contextmanager
def single_keys(stream: TextIO) -> Iterator[None]:
    """Let keys arrive one at a time without Enter, when stream is a terminal; restore after."""
    try:
        import termios
        import tty

        descriptor = stream.fileno()
        if not stream.isatty():
            raise OSError("not a terminal")
        saved = termios.tcgetattr(descriptor)
    except (ImportError, OSError, ValueError, AttributeError):  # a pipe, a file, Windows
        yield
        return
    tty.setcbreak(descriptor)
    try:
        yield
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


def next_hint(root: Path, outcomes: dict[int, Outcome]) -> list[str]:
    """The next tier of hints for the first failing check, or a word that none is needed."""
    from labs.review.hints import hint_lines, tier_to_show

    failing = [n for n in sorted(outcomes) if not outcomes[n].passed]
    if not failing:
        return [message("watch", "no_hint_needed")]
    titles = {check.number: _(check.title) for check in CHECKS}
    number = failing[0]
    tier = tier_to_show(root, number)
    return hint_lines(root, number, tier, titles.get(number, ""), next_label="next_key")


def watch_tree(
    root: Path,
    tree: str,
    out: TextIO,
    stop: threading.Event,
    *,
    poll: bool = False,
    timeout: float = 10.0,
    run: Callable[[Path], dict[int, Outcome]] | None = None,
    keys: TextIO | None = None,
) -> str:
    """Run the checks now, after every change and on r, until q or stop; return the watch mode.

    A run whose result is the same as the last one printed says so in one
    line instead of printing the same block again.
    """
    events: queue.Queue[tuple[str, object]] = queue.Queue()
    last: dict[str, object] = {"outcomes": {}, "block": None}

    def say(lines: list[str]) -> None:
        print("\n".join(lines), file=out, flush=True)

    def check_now() -> None:
        outcomes = syntax_outcomes(root)
        if outcomes is None:
            outcomes = (run or (lambda path: check_outcomes(path, timeout=timeout)))(root)
            outcomes = {
                n: Outcome(o.status, with_folders(o.message, root), o.output, o.test_code)
                for n, o in outcomes.items()
            }
        lines = summary_lines(tree, outcomes)
        block = (lines[0].partition("] ")[2], *lines[1:])
        if block == last["block"]:
            stamp = lines[0].partition("]")[0] + "]"
            say([message("watch", "unchanged", stamp=stamp, tree=tree)])
        else:
            say(lines)
        last.update(outcomes=outcomes, block=block)

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
            outcomes = last["outcomes"]
            assert isinstance(outcomes, dict)
            say(next_hint(root, outcomes))
    return mode
