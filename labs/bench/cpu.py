"""CPU time, as Linux accounts it per process: what each layer spends on one request.

Throughput on a shared two-core machine moves with whatever else runs;
the CPU seconds a process was given move much less. Sampled before and
after a load, they split one request's cost between the Postgres server,
the gunicorn workers and the Python client (which, in part (b), is the
store). Only local processes can be read: with a remote database the
Postgres figure is simply absent.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import psycopg2

TICK = os.sysconf("SC_CLK_TCK")

# A meter returns the CPU seconds its processes have used so far.
Meter = Callable[[], float]


def process_seconds(pid: int, *, reaped_children: bool = False) -> float:
    """utime + stime of one process (plus its reaped children's), 0 if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
    return (utime + stime + (cutime + cstime if reaped_children else 0)) / TICK


def children(pid: int) -> list[int]:
    """The live child processes of pid."""
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def postgres_meter(database_url: str) -> Meter | None:
    """CPU of a local Postgres server: the postmaster, its live children and its reaped ones.

    A backend that exits between two samples moves its time into the
    postmaster's reaped-children total, so nothing is lost or counted twice.
    None when the server is not on this machine or its pid file is unreadable.
    """
    try:
        with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
            cursor.execute("SHOW data_directory")
            row = cursor.fetchone()
        connection.close()
        pid = int((Path(str(row[0] if row else "")) / "postmaster.pid").read_text().split()[0])
    except (psycopg2.Error, OSError, ValueError, IndexError):
        return None
    if not Path(f"/proc/{pid}").exists():
        return None

    def read() -> float:
        return process_seconds(pid, reaped_children=True) + sum(
            process_seconds(child) for child in children(pid)
        )

    return read


def pids_meter(pids: Callable[[], set[int]]) -> Meter:
    """CPU of a changing set of processes (gunicorn's workers, say)."""
    return lambda: sum(process_seconds(pid) for pid in pids())


def self_meter() -> Meter:
    """CPU of this process, every thread included."""
    return lambda: sum(os.times()[:2])


def per_operation(before: dict[str, float], after: dict[str, float], ops: int) -> dict[str, float]:
    """Milliseconds of CPU per operation for each meter."""
    if ops <= 0:
        return {}
    return {name: round((after[name] - before[name]) * 1000 / ops, 3) for name in before}


def sample(meters: dict[str, Meter]) -> dict[str, float]:
    """Read every meter now."""
    return {name: read() for name, read in meters.items()}
