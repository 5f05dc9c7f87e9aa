"""Running a submission's checks in subprocesses with a timeout, never in the grader.

One probe process runs the checks in order. When it hangs on a check, it is
killed, that check fails as timed out, and a fresh process carries on with the
next one, so one endless loop costs one timeout and never the other checks.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from ..sandbox import Sandbox, url_needs_network
from ..untrusted import clean_text
from .criteria import Outcome

CHECK_NUMBERS = range(1, 7)
EVENTS_LIMIT = 4 * 1024 * 1024  # a probe writes a few kilobytes; more is not read
UNREADABLE = "could not grade: the checks' events were not the probe's"
TAMPERED = "the checks could not run: the tree replaced the lab kit's own"
# The name labs.trees gives a tree imported by path; learners know their files as shared/...
SYNTHETIC_PACKAGE = re.compile(r"labtree_[0-9a-f]+\.?")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a trusted tool's process (the baseline typecheck): no bytecode left."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    env.pop("MOCK", None)
    return env


def probe_command(tree: Path, events_file: Path, store: str, first: int) -> list[str]:
    """The probe's command line for checks first..6."""
    command = [sys.executable, "-m", "labs.grading.probe", str(tree), str(events_file)]
    return [*command, "--store", store, "--first", str(first)]


def run_probe(
    box: Sandbox, command: list[str], timeout: float, env: dict[str, str]
) -> tuple[bool, str]:
    """Run one probe process in the submission's sandbox; return (timed_out, its stderr's end)."""
    done = box.run(command, timeout=timeout, env=env)
    if done.timed_out:
        return True, ""
    return False, clean_text(done.stderr.strip()[-400:]) if done.returncode else ""


def read_events(path: Path, limit: int = EVENTS_LIMIT) -> list[dict[str, object]]:
    """The events a probe wrote (at most `limit` bytes); a line cut off by a kill is ignored."""
    events = []
    if path.is_file():
        with path.open("rb") as stream:
            text = stream.read(limit).decode("utf-8", "replace")
        for line in text.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def untrusted(value: object, *, lines: bool = False, limit: int = 2000) -> str:
    """Text that came from the learner's process, cleaned and cut to a sane length."""
    text = value if isinstance(value, str) else ""
    return clean_text(SYNTHETIC_PACKAGE.sub("", text[:limit]), keep_newlines=lines)


def check_outcomes(
    tree: Path,
    store: str = "memory",
    *,
    timeout: float = 10.0,
    database_url: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[int, Outcome]:
    """Each of the six checks' outcome for the tree at `tree`, run in a sandbox of its own.

    The tree is copied into the sandbox (readable by its user, writable by
    nobody), and the probe writes its events in the sandbox's private folder,
    which no other submission's processes can reach. Once the checks run in
    the driver (labs.driver) with the tree in its host, this loop becomes one
    run_checks(..., launcher=SandboxedLauncher(), check_timeout=timeout) call.
    """
    outcomes: dict[int, Outcome] = {}
    extra = {**(env or {}), **({"DATABASE_URL": database_url} if database_url else {})}
    with Sandbox(network=needs_network(database_url)) as box:
        copy = box.share(tree, tree.name)
        events_file = box.home / "events.jsonl"
        first = 1
        while first <= max(CHECK_NUMBERS):
            seen = len(read_events(events_file))
            command = probe_command(copy, events_file, store, first)
            if database_url:
                command += ["--database-url", database_url]
            timed_out, stderr = run_probe(box, command, timeout, extra)
            events = read_events(events_file)[seen:]
            stop = record(events, outcomes)
            if stop.startswith(TAMPERED):
                outcomes.clear()  # learner's code ran before it was caught: trust none of it
            if stop:
                fail_rest(outcomes, stop)
                break
            started = [int(str(e["check"])) for e in events if e["event"] == "started"]
            if not any(e["event"] == "imported" for e in events):
                why = (
                    f"the tree did not finish importing within {timeout:g} s "
                    "(an endless loop at import time?)"
                    if timed_out
                    else f"the checks' process died while importing the tree: {stderr}"
                )
                fail_rest(outcomes, why)
                break
            current = started[-1] if started else first
            if current not in outcomes:
                outcomes[current] = Outcome(
                    "fail",
                    (
                        f"timed out after {timeout:g} s (an endless loop?)"
                        if timed_out
                        else f"the checks' process died during this check: {stderr}"
                    ),
                )
            first = current + 1
    return outcomes


def needs_network(database_url: str | None) -> bool:
    """Whether the checks need the network: only to reach a database over TCP."""
    return bool(database_url) and url_needs_network(database_url or "")


def record(events: list[dict[str, object]], outcomes: dict[int, Outcome]) -> str:
    """Turn result events into outcomes; return a reason to stop, if one came."""
    for event in events:
        kind = event.get("event")
        if kind in ("import-failed", "store-failed"):
            return "the checks could not run: " + untrusted(event.get("error"))
        if kind == "tampered":
            names = event.get("replaced")
            shown = ", ".join(map(untrusted, names if isinstance(names, list) else []))
            return (
                f"{TAMPERED} {shown[:300]} while it ran; no check is graded "
                "(grading runs the learner's code: look at the tree by hand)"
            )
        if kind == "result":
            test, check = event.get("test"), event.get("check")
            if not isinstance(test, dict) or check not in CHECK_NUMBERS:
                return f"{UNREADABLE} (a result that is not one)"
            outcomes[int(str(check))] = Outcome(
                "pass" if test.get("status") == "pass" else "fail",
                untrusted(test.get("message")),
                untrusted(test.get("output"), lines=True),
                untrusted(test.get("test_code"), lines=True),
            )
        elif kind == "started" and event.get("check") not in CHECK_NUMBERS:
            return f"{UNREADABLE} (a check that does not exist)"
    return ""


def fail_rest(outcomes: dict[int, Outcome], why: str) -> None:
    """Fail every check not yet graded, for one shared reason."""
    for number in CHECK_NUMBERS:
        outcomes.setdefault(number, Outcome("fail", why))
