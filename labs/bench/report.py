"""The benchmark's report: a table for people, JSON for the record."""

from __future__ import annotations

from .model import BenchReport
from .stats import Measurement

PART_NAMES = {
    "a": "(a) raw INSERT ... ON CONFLICT",
    "b": "(b) SqlStore.create_run",
    "c0": "(c0) gunicorn, app does nothing",
    "c": "(c) POST /chat via gunicorn",
    "d-split": "(d) split: runs in workers",
    "d-inline": "(d) inline: runs in handler",
}
# (ratio, concurrency, target, stretch)
TARGETS = [("b/a", 1, 0.5, None), ("c/a", 16, 0.35, 0.5)]


def _row(m: Measurement) -> str:
    name = PART_NAMES.get(m.part, m.part)
    if m.loop == "open":
        name += f" @{m.rate:.0f}/s"
    return (
        f"{name:40}{m.tool:>8}{m.clients:>8}{m.throughput:>10.0f}"
        f"{m.p50_ms:>10.2f}{m.p99_ms:>10.2f}{m.errors:>8}"
    )


def _header() -> str:
    columns = f"{'tool':>8}{'clients':>8}{'ops/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
    return f"{'part':40}{columns}"


def format_report(report: BenchReport) -> str:
    """The whole run as tables: throughput, ratios, layer costs, (d), the memory store."""
    machine, settings = report.machine, report.settings
    lines = [
        f"machine: {machine['cpus']} cores, Python {machine['python']}, "
        f"Postgres {machine['postgres']} ({machine['platform']})",
        f"windows: {settings['seconds']} s measured per load; gunicorn gthread "
        f"{settings['workers']} processes x {settings['threads']} threads for (c0) and (c)",
        "",
        _header(),
    ]
    for group in (report.raw_sql, report.store, report.floor_http, report.http):
        lines += [_row(m) for m in group]
    if report.open_http:
        lines += ["", "open loop (latency from each request's intended send time):"]
        lines += [_row(m) + f"  late {m.late}" for m in report.open_http]
    if report.cross_check:
        lines += ["", "cross-check, the same loads from the Python generator:"]
        lines += [_row(m) for m in report.cross_check]
    lines += ["", *_ratio_lines(report)]
    costs = report.layer_costs()
    if costs:
        lines += [
            "",
            "per request at one client (ms): "
            + ", ".join(f"{name.replace('_', ' ')} {value:.3f}" for name, value in costs.items()),
        ]
    split = report.cpu_split()
    if split:
        top = max(m.clients for m in report.http)
        lines.append(
            f"CPU per request at {top} clients (ms): "
            + ", ".join(f"{name.replace('_', ' ')} {value:.3f}" for name, value in split.items())
        )
    metered = [m for group in _groups(report) for m in group if m.cpu_ms]
    if metered:
        lines += ["", "CPU per operation (ms), by process:"]
        for m in metered:
            spent = ", ".join(f"{who} {ms:.3f}" for who, ms in sorted(m.cpu_ms.items()))
            lines.append(f"    {PART_NAMES.get(m.part, m.part):34}{m.clients:>4} clients: {spent}")
    if report.accept:
        lines += [
            "",
            f"(d) accept latency while 16 slow agent runs ({settings['agent_seconds']} s each) "
            "are in flight, gunicorn 1 process x 16 threads:",
            *[_row(m) for m in report.accept],
            f"    slow runs started: split {report.slow_runs_started.get('split', 0)}, "
            f"inline {report.slow_runs_started.get('inline', 0)}",
        ]
    if report.memory:
        lines += ["", "memory store, per call (us):"]
        for cost in report.memory:
            reached = (
                ""
                if cost.rows >= cost.target_rows
                else f" (fill stopped at {cost.rows:,} of {cost.target_rows:,} rows: time budget)"
            )
            per_call = f"{cost.per_call_us:>9.1f}"
            lines.append(f"    {cost.operation:16} at {cost.rows:>7,} rows: {per_call}{reached}")
    steps = settings.get("step_seconds")
    if isinstance(steps, dict):
        lines += ["", "time per step (s): " + ", ".join(f"{v}" for v in steps.values())]
    lines.append(f"\ntotal wall time {settings.get('wall_seconds', '?')} s")
    return "\n".join(lines)


def _groups(report: BenchReport) -> list[list[Measurement]]:
    return [report.raw_sql, report.store, report.floor_http, report.http, report.open_http]


def _ratio_lines(report: BenchReport) -> list[str]:
    ratios = report.ratios()
    lines = []
    for name, found in ratios.items():
        if not found:
            continue
        listed = ", ".join(f"{n} client{'s' if n > 1 else ''}: {r:.2f}" for n, r in found.items())
        lines.append(f"{name} throughput ratio: {listed}")
    for name, clients, target, stretch in TARGETS:
        value = ratios.get(name, {}).get(clients)
        if value is None:
            continue
        verdict = "met" if value >= target else "NOT met"
        extra = (
            f", stretch {stretch}: {'met' if value >= stretch else 'not met'}" if stretch else ""
        )
        lines.append(f"target {name} >= {target} at {clients} client(s): {verdict}{extra}")
    return lines
