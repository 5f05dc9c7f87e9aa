"""python -m labs check --report FILE: every result with its trace, one JSON line each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from labs.checking.api import CHECKS, EXTRA_CHECKS
from labs.trees.finding import REPO_ROOT


def check(tmp_path: Path, *extra: str) -> tuple[str, list[dict[str, object]]]:
    """Run the starter's checks with --report; return the printed text and the lines."""
    report = tmp_path / "report.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "labs",
            "check",
            "--tree",
            "starter",
            "--report",
            str(report),
            "--seed",
            "1",
            *extra,
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1  # the starter fails three checks
    return done.stdout, [json.loads(line) for line in report.read_text().splitlines()]


def test_the_report_has_a_line_per_check_then_a_summary(tmp_path: Path) -> None:
    """Six result lines with their events, then totals matching what was printed."""
    printed, lines = check(tmp_path)
    results, summary = lines[:-1], lines[-1]
    assert [r["key"] for r in results] == [str(c.number) for c in CHECKS]
    assert all(r["events"] for r in results)
    assert summary["type"] == "report"
    assert f"{summary['passed']} passed, {summary['failed']} failed" in printed


def test_extra_checks_are_reported_after_the_six(tmp_path: Path) -> None:
    """With --extra the extra checks follow, without a check number."""
    _, lines = check(tmp_path, "--extra")
    extras = [r for r in lines if r["type"] == "result" and r["number"] is None]
    assert [r["key"] for r in extras] == [c.key for c in EXTRA_CHECKS]


def test_the_printed_output_is_the_same_with_or_without_a_report(tmp_path: Path) -> None:
    """--report adds a file and leaves the terminal's check lines and totals as they were."""
    plain = subprocess.run(
        [sys.executable, "-m", "labs", "check", "--tree", "starter", "--seed", "1"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    printed, _ = check(tmp_path)

    def without_times(text: str) -> str:
        # Detail lines quote fresh ids and keys; the check lines hold the verdicts.
        return "\n".join(
            line.split("  (")[0] for line in text.splitlines() if not line.startswith("        ")
        )

    assert without_times(printed) == without_times(plain)
