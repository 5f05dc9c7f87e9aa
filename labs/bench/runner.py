"""One benchmark run: a scratch database, the four parts, one report."""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import psycopg2

from ..scratchdb import migrate, scratch_database
from ..trees import REPO_ROOT
from .agent import SLOW_MESSAGE
from .server import GatewayServer
from .stats import Measurement

LEVELS = [1, 4, 16]
SLOW_RUNS = 16
PROBES = 4


@dataclass(frozen=True)
class BenchSettings:
    """How long and how hard: --quick shortens every window."""

    quick: bool = False
    tree: str = "solution"
    # gunicorn for (c): processes x threads; two cores want two processes.
    workers: int = 2
    threads: int = 8

    @property
    def seconds(self) -> float:
        """Measured window per load."""
        return 0.8 if self.quick else 4.0

    @property
    def warmup(self) -> float:
        """Unmeasured start of each load (connections, caches)."""
        return 0.2 if self.quick else 1.0

    @property
    def agent_seconds(self) -> float:
        """How long one slow agent run takes in part (d)."""
        return 1.0 if self.quick else 3.0


@dataclass
class BenchReport:
    """Everything one run measured, with the machine it ran on."""

    machine: dict[str, object]
    settings: dict[str, object]
    raw_sql: list[Measurement] = field(default_factory=list)
    store: list[Measurement] = field(default_factory=list)
    http: list[Measurement] = field(default_factory=list)
    accept_split: Measurement | None = None
    accept_inline: Measurement | None = None
    slow_runs_started: dict[str, int] = field(default_factory=dict)

    def ratios(self) -> dict[int, float]:
        """(c)/(a) throughput at each concurrency."""
        floor = {m.clients: m.throughput for m in self.raw_sql}
        return {
            m.clients: round(m.throughput / floor[m.clients], 2)
            for m in self.http
            if floor.get(m.clients)
        }

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {**asdict(self), "ratio_c_over_a": {str(k): v for k, v in self.ratios().items()}}


def run_bench(
    settings: BenchSettings, database_url: str | None, say: Callable[[str], None] = print
) -> BenchReport:
    """Measure (a) to (d) on one scratch database and return the report."""
    started = time.monotonic()
    say("making a scratch database" + ("" if database_url else " on a throwaway cluster"))
    with scratch_database(database_url, "bench", durable=True) as url:
        migrate(url, settings.tree)
        report = BenchReport(
            _machine(url),
            {
                **asdict(settings),
                "levels": LEVELS,
                "seconds": settings.seconds,
                "warmup": settings.warmup,
                "agent_seconds": settings.agent_seconds,
            },
        )
        session_id = _new_session(url, settings.tree)
        base = {
            "database_url": url,
            "schema": settings.tree,
            "tree": settings.tree,
            "session_id": session_id,
            "clients": LEVELS,
            "warmup": settings.warmup,
            "seconds": settings.seconds,
        }
        say("(a) raw INSERT ... ON CONFLICT DO NOTHING")
        report.raw_sql = _load({**base, "kind": "sql", "part": "a"})
        say("(b) SqlStore.create_run")
        report.store = _load({**base, "kind": "store", "part": "b"})
        say("(c) POST /chat through gunicorn")
        env = {"DATABASE_URL": url, "DB_SCHEMA": settings.tree}
        app = f"{settings.tree}.gateway.wsgi:app"
        with GatewayServer(app, env, workers=settings.workers, threads=settings.threads) as server:
            report.http = _load({**base, "kind": "http", "part": "c", "port": server.port})
        say(f"(d) accept latency with {SLOW_RUNS} slow agent runs in flight")
        accept = {
            **base,
            "kind": "accept",
            "slow_runs": SLOW_RUNS,
            "probes": PROBES,
            "seconds": settings.seconds * 2,
            "warmup": settings.warmup * 2,
        }
        _clear_queue(url, settings.tree)
        env |= {"BENCH_AGENT_SECONDS": str(settings.agent_seconds), "BENCH_TREE": settings.tree}
        report.accept_split = _split(url, app, env, settings, accept)
        report.slow_runs_started["split"] = _slow_runs_started(url, settings.tree)
        with GatewayServer("labs.bench.inline:app", env, workers=1, threads=SLOW_RUNS) as server:
            report.accept_inline = _load(
                {**accept, "mode": "inline", "part": "d-inline", "port": server.port}
            )[0]
        report.slow_runs_started["inline"] = (
            _slow_runs_started(url, settings.tree) - report.slow_runs_started["split"]
        )
    report.settings["wall_seconds"] = round(time.monotonic() - started, 1)
    return report


def _split(
    url: str, app: str, env: dict[str, str], settings: BenchSettings, accept: dict[str, object]
) -> Measurement:
    """Gateway and workers as separate processes; the workers keep 16 runs busy."""
    window = settings.warmup + float(str(accept["seconds"]))
    backlog = SLOW_RUNS * (int(window / settings.agent_seconds) + 2)
    workers = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "labs.bench.agent",
            "--tree",
            settings.tree,
            "--threads",
            str(SLOW_RUNS),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
    )
    try:
        assert workers.stdout is not None
        workers.stdout.readline()  # "ready": the store is built, the threads are starting
        with GatewayServer(app, env, workers=1, threads=SLOW_RUNS) as server:
            return _load(
                {
                    **accept,
                    "mode": "split",
                    "part": "d-split",
                    "backlog": backlog,
                    "port": server.port,
                }
            )[0]
    finally:
        workers.send_signal(signal.SIGTERM)
        try:
            workers.wait(timeout=settings.agent_seconds + 10)
        except subprocess.TimeoutExpired:
            workers.kill()
            workers.wait()


def _load(spec: dict[str, object]) -> list[Measurement]:
    """Run the load generator in its own process and read back its measurements."""
    done = subprocess.run(
        [sys.executable, "-m", "labs.bench.loadgen", json.dumps(spec)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed:\n{done.stderr.strip()[-3000:]}")
    return [Measurement(**row) for row in json.loads(done.stdout)]


def _new_session(url: str, tree: str) -> str:
    import importlib

    infra = importlib.import_module(f"{tree}.infra")
    store = infra.make_store({"DATABASE_URL": url, "DB_SCHEMA": tree})
    return str(store.create_session("bench", "benchmark").id)


def _clear_queue(url: str, tree: str) -> None:
    """Cancel the pending runs (a) to (c) left, so (d)'s workers see only (d)'s runs."""
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(
            f'UPDATE "{tree}".runs SET status = %s WHERE status = %s', ("cancelled", "pending")
        )
    connection.close()


def _slow_runs_started(url: str, tree: str) -> int:
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute(
            f'SELECT count(*) FROM "{tree}".runs WHERE input = %s AND status <> %s',
            (SLOW_MESSAGE, "pending"),
        )
        row = cursor.fetchone()
    connection.close()
    return int(row[0]) if row else 0


def _machine(url: str) -> dict[str, object]:
    with psycopg2.connect(url) as connection, connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        row = cursor.fetchone()
    connection.close()
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "postgres": str(row[0]).split()[0] if row else "?",
        "platform": platform.platform(terse=True),
    }
