"""Summaries of a load: throughput and latency percentiles."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Tool = Literal["python", "pgbench", "wrk"]  # what generated a load (python: loadgen.py)
Loop = Literal["closed", "open"]  # closed: each client waits for its answer; open: a fixed rate


@dataclass(frozen=True)
class Measurement:
    """One load at one concurrency: how much got done, how fast, how often it failed."""

    part: str
    clients: int
    operations: int
    seconds: float
    throughput: float
    p50_ms: float
    p99_ms: float
    errors: int
    tool: Tool = "python"  # what generated the load: pgbench, wrk, or the Python loadgen
    loop: Loop = "closed"  # closed: each client waits for its answer; open: a fixed arrival rate
    rate: float = 0.0  # open loop: the arrival rate asked for, per second
    late: int = 0  # open loop: requests sent more than 1 ms after their intended time
    # CPU milliseconds per operation, by whom: postgres, server (gunicorn workers), client.
    cpu_ms: dict[str, float] = field(default_factory=dict)


def percentile(sorted_values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(
    part: str, clients: int, latencies: list[float], seconds: float, errors: int
) -> Measurement:
    """Turn per-operation latencies (seconds) over a window into a Measurement."""
    ordered = sorted(latencies)
    return Measurement(
        part=part,
        clients=clients,
        operations=len(ordered),
        seconds=round(seconds, 3),
        throughput=round(len(ordered) / seconds, 1) if seconds > 0 else 0.0,
        p50_ms=round(percentile(ordered, 0.50) * 1000, 2),
        p99_ms=round(percentile(ordered, 0.99) * 1000, 2),
        errors=errors,
    )
