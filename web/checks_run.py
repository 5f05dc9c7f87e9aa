"""Running the checks in a child process, so a learner's bug cannot hang or kill the dashboard.

The child is `python -m labs check ... --report FILE`; it writes one JSON
line per finished check. A fresh process imports the tree afresh, so edits
show up on the next run without restarting the dashboard.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from labs.checks import CHECKS
from labs.extra_checks import EXTRA_CHECKS
from labs.trees import REPO_ROOT

from .sequence import Diagram, draw_sequence

# Every check the child will run, in its order: the six, then the extras.
PLANNED: list[tuple[str, int | None, str]] = [
    (str(c.number), c.number, c.title) for c in CHECKS
] + [(c.key, None, c.title) for c in EXTRA_CHECKS]
STDERR_TAIL = 1500


@dataclass
class CheckRow:
    """One row of the checks view."""

    key: str
    number: int | None
    title: str
    status: str  # pass, fail, not run
    duration_ms: float | None = None
    message: str = ""
    hint: str = ""
    events: list[dict[str, str]] = field(default_factory=list)

    @property
    def extra(self) -> bool:
        """Extra checks are labelled and never counted in the six."""
        return self.number is None

    @property
    def diagram(self) -> Diagram | None:
        """The sequence diagram of the check's trace, if it recorded one."""
        return draw_sequence(self.events) if self.events else None


@dataclass
class CheckRun:
    """One run of the checks on one tree and store, as the view shows it."""

    tree: str
    store: str
    rows: list[CheckRow]
    error: str = ""  # why the checks could not run (import error, timeout, crash)
    finished_at: str = ""
    seconds: float = 0.0

    @property
    def six(self) -> list[CheckRow]:
        """Checks 1 to 6."""
        return [r for r in self.rows if not r.extra]

    @property
    def extras(self) -> list[CheckRow]:
        """The extra checks."""
        return [r for r in self.rows if r.extra]

    @property
    def passed(self) -> int:
        """How many of the six passed."""
        return sum(r.status == "pass" for r in self.six)


def run_in_subprocess(
    tree: str, spec: str, store: str, *, database_url: str | None, timeout: float
) -> CheckRun:
    """Run every check on a tree in a child process killed after timeout seconds."""
    env = dict(os.environ)
    env.pop("MOCK", None)
    if database_url:
        env["DATABASE_URL"] = database_url
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lab-checks-") as folder:
        report = Path(folder) / "report.jsonl"
        command = [
            sys.executable,
            "-m",
            "labs",
            "check",
            "--tree",
            spec,
            "--store",
            store,
            "--extra",
            "--report",
            str(report),
        ]
        stopped = ""
        try:
            done = subprocess.run(
                command,
                cwd=REPO_ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            if done.returncode not in (0, 1):
                stopped = (
                    f"the check process stopped with exit code {done.returncode}: "
                    f"{done.stderr.strip()[-STDERR_TAIL:] or '(no output)'}"
                )
        except subprocess.TimeoutExpired:
            stopped = (
                f"timed out after {timeout:g} s and was stopped: "
                "an infinite loop, or a wait that never ends?"
            )
        lines = _read_lines(report)
    run = build_run(tree, store, lines, stopped)
    run.seconds = time.perf_counter() - started
    run.finished_at = datetime.now().strftime("%H:%M:%S")
    return run


def _read_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:  # the last line may be cut short by a kill
            break
    return entries


def build_run(tree: str, store: str, lines: list[dict[str, Any]], stopped: str) -> CheckRun:
    """Turn the child's report lines into rows; checks it never finished become failed rows."""
    results = {e["key"]: e for e in lines if e.get("type") == "result"}
    summary = next((e for e in lines if e.get("type") == "report"), None)
    error = (
        stopped
        or (summary or {}).get("error", "")
        or ("" if summary else "the check process wrote no report")
    )
    rows: list[CheckRow] = []
    blamed = False
    for key, number, title in PLANNED:
        entry = results.get(key)
        if entry is not None:
            rows.append(_row_from(entry))
        elif not blamed and error:
            # The first check without a result is the one that hung, crashed or never began.
            rows.append(CheckRow(key, number, title, "fail", message=error))
            blamed = True
        else:
            status = "fail" if error and number is not None else "not run"
            rows.append(
                CheckRow(key, number, title, status, message="not run: " + error if error else "")
            )
    return CheckRun(tree, store, rows, error=error)


def _row_from(entry: dict[str, Any]) -> CheckRow:
    hint = entry.get("hint")
    where = f"{hint['path']}:{hint['line']}" if hint else ""
    return CheckRow(
        key=entry["key"],
        number=entry.get("number"),
        title=entry["title"],
        status="pass" if entry.get("passed") else "fail",
        duration_ms=entry.get("duration_ms"),
        message=f"expected: {entry.get('expected', '')}\ngot:      {entry.get('got', '')}"
        if not entry.get("passed")
        else "",
        hint=f"{where}  {hint['text']}".strip() if hint else "",
        events=list(entry.get("events", [])),
    )
