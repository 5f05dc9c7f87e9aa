"""The benchmark's report: a table for people, JSON for the record."""

from __future__ import annotations

from .runner import BenchReport
from .stats import Measurement

PART_NAMES = {
    "a": "(a) raw INSERT ... ON CONFLICT",
    "b": "(b) SqlStore.create_run",
    "c": "(c) POST /chat via gunicorn",
    "d-split": "(d) split: runs in workers",
    "d-inline": "(d) inline: runs in handler",
}
TARGET_RATIO = 0.5


def _row(m: Measurement) -> str:
    return (
        f"{PART_NAMES.get(m.part, m.part):34}{m.clients:>8}{m.throughput:>10.0f}"
        f"{m.p50_ms:>10.2f}{m.p99_ms:>10.2f}{m.errors:>8}"
    )


def format_report(report: BenchReport) -> str:
    """The whole run as a table, the ratio, and what part (d) shows."""
    machine, settings = report.machine, report.settings
    lines = [
        f"machine: {machine['cpus']} cores, Python {machine['python']}, "
        f"Postgres {machine['postgres']} ({machine['platform']})",
        f"windows: {settings['seconds']} s measured per load after {settings['warmup']} s "
        f"warm-up; gunicorn gthread {settings['workers']} processes x {settings['threads']} "
        "threads for (c)",
        "",
        f"{'part':34}{'clients':>8}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}",
    ]
    for group in (report.raw_sql, report.store, report.http):
        lines += [_row(m) for m in group]
    ratios = report.ratios()
    if ratios:
        listed = ", ".join(f"{n} client{'s' if n > 1 else ''}: {r:.2f}" for n, r in ratios.items())
        top = ratios.get(max(ratios))
        verdict = "met" if top is not None and top >= TARGET_RATIO else "NOT met"
        lines += [
            "",
            f"(c)/(a) throughput ratio: {listed} "
            f"(target >= {TARGET_RATIO} at 16 clients: {verdict})",
        ]
    if report.accept_split and report.accept_inline:
        lines += [
            "",
            f"(d) accept latency of {report.accept_split.clients} probe clients while 16 slow "
            f"agent runs ({settings['agent_seconds']} s each) are in flight, "
            "gunicorn 1 process x 16 threads:",
            _row(report.accept_split),
            _row(report.accept_inline),
            f"    slow runs started during the window: split {report.slow_runs_started['split']}"
            f", inline {report.slow_runs_started['inline']}",
        ]
    lines.append(f"\ntotal wall time {settings.get('wall_seconds', '?')} s")
    return "\n".join(lines)
