"""Running a submission's checks in subprocesses with a timeout, never in the grader.

One probe process runs the checks in order. When it hangs on a check, it is
killed, that check fails as timed out, and a fresh process carries on with the
next one, so one endless loop costs one timeout and never the other checks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .criteria import Outcome

CHECK_NUMBERS = range(1, 7)
TAMPERED = "the checks could not run: the tree replaced the lab kit's own"
# The name labs.trees gives a tree imported by path; learners know their files as shared/...
SYNTHETIC_PACKAGE = re.compile(r"labtree_[0-9a-f]+\.?")


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a learner's process: no bytecode left in the submission."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})}
    env.pop("MOCK", None)
    return env


def run_probe(
    tree: Path,
    events_file: Path,
    store: str,
    first: int,
    timeout: float,
    database_url: str | None,
    env: dict[str, str],
) -> tuple[bool, str]:
    """Run one probe process; return (timed_out, the tail of its stderr)."""
    command = [
        sys.executable,
        "-m",
        "labs.grading.probe",
        str(tree.resolve()),
        str(events_file),
        "--store",
        store,
        "--first",
        str(first),
    ]
    if database_url:
        command += ["--database-url", database_url]
    with tempfile.TemporaryDirectory(prefix="lab-probe-") as cwd:
        try:
            done = subprocess.run(
                command,
                cwd=cwd,
                env=env,
                timeout=timeout,
                capture_output=True,
                text=True,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return True, ""
    return False, done.stderr.strip()[-400:] if done.returncode else ""


def read_events(path: Path) -> list[dict[str, object]]:
    """The events a probe wrote; a line cut off by a kill is ignored."""
    events = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return events


def check_outcomes(
    tree: Path,
    store: str = "memory",
    *,
    timeout: float = 10.0,
    database_url: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[int, Outcome]:
    """Each of the six checks' outcome for the tree at `tree`, run out of process."""
    outcomes: dict[int, Outcome] = {}
    environment = child_env(env)
    with tempfile.TemporaryDirectory(prefix="lab-events-") as scratch:
        events_file = Path(scratch) / "events.jsonl"
        first = 1
        while first <= max(CHECK_NUMBERS):
            seen = len(read_events(events_file))
            timed_out, stderr = run_probe(
                tree, events_file, store, first, timeout, database_url, environment
            )
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


def record(events: list[dict[str, object]], outcomes: dict[int, Outcome]) -> str:
    """Turn result events into outcomes; return a reason to stop, if one came."""
    for event in events:
        if event["event"] in ("import-failed", "store-failed"):
            return "the checks could not run: " + SYNTHETIC_PACKAGE.sub("", str(event["error"]))
        if event["event"] == "tampered":
            names = event["replaced"]
            assert isinstance(names, list)
            return (
                f"{TAMPERED} {', '.join(map(str, names))} while it ran; no check is graded "
                "(grading runs the learner's code: look at the tree by hand)"
            )
        if event["event"] == "result":
            test = event["test"]
            assert isinstance(test, dict)
            outcomes[int(str(event["check"]))] = Outcome(
                "pass" if test["status"] == "pass" else "fail",
                SYNTHETIC_PACKAGE.sub("", test.get("message") or ""),
                test.get("output") or "",
                test.get("test_code") or "",
            )
    return ""


def fail_rest(outcomes: dict[int, Outcome], why: str) -> None:
    """Fail every check not yet graded, for one shared reason."""
    for number in CHECK_NUMBERS:
        outcomes.setdefault(number, Outcome("fail", why))
