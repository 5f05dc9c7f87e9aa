"""One benchmark run: a scratch database, the parts, one report.

(a) raw INSERT ... ON CONFLICT DO NOTHING, driven by pgbench; (b)
SqlStore.create_run, called from Python threads; (c0) gunicorn serving an
app that does nothing, (c1) the same gunicorn serving a Flask route that
parses the body and stores nothing, (c) POST /chat through gunicorn, and
(c-tuned) the hand-tuned POST /chat the trees used to carry (tuned.py), all
driven by wrk; the same (c) at a fixed arrival rate; (d) accept latency while
slow agent runs are in flight, in workers and in the handler; and the memory
store's per-call cost at a small and a big size. When pgbench or wrk is
missing, the Python load generator stands in, and the report says so.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from functools import partial

import psycopg2

from labs.pg.scratch import migrate, scratch_database
from labs.term.i18n import N_, _
from labs.trees.finding import REPO_ROOT

from .agent import SLOW_MESSAGE
from .cpu import Meter, per_operation, pids_meter, postgres_meter, sample
from .memory import measure_memory_store
from .model import (
    ACCEPT_CONNECTIONS,
    ACCEPT_RATE,
    OPEN_CONNECTIONS,
    PROBES,
    SLOW_RUNS,
    BenchReport,
    BenchSettings,
)
from .server import GatewayServer
from .stats import Measurement
from .tools import find_tool, run_pgbench, run_wrk

FLOOR_APP = "labs.bench.floor:app"  # (c0)
FLASK_FLOOR_APP = "labs.bench.floor:flask_app"  # (c1)
TUNED_APP = "labs.bench.tuned:create_app()"  # (c-tuned)


def gateway_app(tree: str) -> str:
    """The tree's gateway as gunicorn loads it: Flask's application factory."""
    return f"{tree}.gateway:create_app()"


# Announces the next step: step(N_("message with {fields}"), fields=...). The learner reads
# the message in their language; the JSON's step_seconds keeps it in English.
Step = Callable[..., None]


def run_bench(
    settings: BenchSettings, database_url: str | None, say: Callable[[str], None] = print
) -> BenchReport:
    """Measure every part on one scratch database and return the report."""
    started = time.monotonic()
    steps: list[tuple[str, float]] = []

    def step(message: str, **fields: object) -> None:
        """Say what comes next, and remember when it began (the report lists each step's time).

        The message is English, marked with N_(); it is said in the learner's language and
        remembered in English, as the key of the JSON's step_seconds.
        """
        steps.append((message.format(**fields), time.monotonic()))
        say(_(message).format(**fields))

    if database_url:
        step(N_("making a scratch database"))
    else:
        step(N_("making a scratch database on a throwaway cluster"))
    with scratch_database(database_url, "bench", durable=True) as url:
        migrate(url, settings.tree)
        report = BenchReport(
            _machine(url),
            {
                **asdict(settings),
                "levels": settings.levels,
                "seconds": settings.seconds,
                "warmup": settings.warmup,
                "agent_seconds": settings.agent_seconds,
            },
        )
        base = {
            "database_url": url,
            "schema": settings.tree,
            "tree": settings.tree,
            "session_id": _new_session(url, settings.tree),
            "clients": settings.levels,
            "warmup": settings.warmup,
            "seconds": settings.seconds,
        }
        step(N_("(a) raw INSERT ... ON CONFLICT DO NOTHING"))
        report.raw_sql = raw_sql_part(settings, base)
        step(N_("(b) SqlStore.create_run (Python threads)"))
        report.store = _load({**base, "kind": "store", "part": "b"})
        _http_parts(report, settings, base, step)
        _accept_parts(report, settings, base, step)
    step(
        N_("memory store: create_run and append_message at {small} and {big} rows"),
        small=f"{min(settings.memory_sizes):,}",
        big=f"{max(settings.memory_sizes):,}",
    )
    report.memory = measure_memory_store(
        settings.tree, settings.memory_sizes, settings.memory_budget
    )
    ended = time.monotonic()
    report.settings["wall_seconds"] = round(ended - started, 1)
    report.settings["step_seconds"] = {
        line: round(end - begin, 1)
        for (line, begin), end in zip(steps, [t for _, t in steps[1:]] + [ended], strict=True)
    }
    return report


def raw_sql_part(settings: BenchSettings, base: dict[str, object]) -> list[Measurement]:
    """(a) at each level: pgbench if installed, else the Python generator."""
    pgbench = find_tool("pgbench")
    if pgbench is None:
        return _load({**base, "kind": "sql", "part": "a"})
    url, session_id = str(base["database_url"]), str(base["session_id"])
    meters = _postgres(url)
    load = partial(run_pgbench, pgbench, url, settings.tree, session_id)
    return [_metered(meters, partial(load, n, settings.seconds)) for n in _levels(base)]


def http_part(
    settings: BenchSettings, base: dict[str, object], part: str, server: GatewayServer
) -> list[Measurement]:
    """(c0), (c1), (c) or (c-tuned) at each level, closed loop: wrk, else the Python generator."""
    wrk, port = find_tool("wrk"), server.port
    if wrk is None:
        return _load({**base, **_at(server), "kind": "http", "part": part})
    session_id, levels = str(base["session_id"]), _levels(base)
    if part in ("c", "c-tuned") and not settings.quick:
        run_wrk(wrk, part, port, session_id, max(levels), 1)  # warm-up: connection pools
    meters = {**_postgres(str(base["database_url"])), "server": pids_meter(server.worker_pids)}
    load = partial(run_wrk, wrk, part, port, session_id)
    return [_metered(meters, partial(load, n, settings.seconds)) for n in levels]


def _at(server: GatewayServer) -> dict[str, object]:
    """The spec keys that point a Python load at a server and its workers' CPU."""
    return {"port": server.port, "server_pids": sorted(server.worker_pids())}


def _postgres(url: str) -> dict[str, Meter]:
    found = postgres_meter(url)
    return {"postgres": found} if found else {}


def _metered(meters: dict[str, Meter], load: Callable[[], Measurement]) -> Measurement:
    """Run a tool's load between two readings of the meters; attach CPU per operation."""
    before = sample(meters)
    measured = load()
    return replace(measured, cpu_ms=per_operation(before, sample(meters), measured.operations))


def _levels(base: dict[str, object]) -> list[int]:
    levels = base["clients"]
    assert isinstance(levels, list)
    return [int(n) for n in levels]


def _http_parts(
    report: BenchReport,
    settings: BenchSettings,
    base: dict[str, object],
    say: Step,
) -> None:
    """(c0), (c1), (c) and (c-tuned) closed loop, (c) open loop, and the tools' cross-check."""
    top = max(settings.levels)
    env = {"DATABASE_URL": str(base["database_url"]), "DB_SCHEMA": settings.tree}

    def gunicorn(app: str, env: dict[str, str]) -> GatewayServer:
        """gunicorn serving app with the settings every part of (c) shares."""
        return GatewayServer(
            app, env, workers=settings.workers, threads=settings.threads, graceful_stop=False
        )

    # The servers start together; each waits, idle, while the ones before it are measured.
    tuned_env = {**env, "BENCH_TREE": settings.tree}
    waiting = [
        gunicorn(gateway_app(settings.tree), env).launch(),
        gunicorn(TUNED_APP, tuned_env).launch(),
    ]
    gateway, tuned = waiting
    try:
        say(N_("(c0) the HTTP floor: gunicorn serving an app that does nothing"))
        with gunicorn(FLOOR_APP, {}) as floor:
            report.floor_http = http_part(settings, base, "c0", floor)
        say(N_("(c1) the Flask floor: a Flask route that parses the body, without the store"))
        with gunicorn(FLASK_FLOOR_APP, {}) as flask_floor:
            report.flask_floor = http_part(settings, base, "c1", flask_floor)
        say(N_("(c-tuned) the hand-tuned POST /chat, for comparison with (c)"))
        with tuned:
            report.tuned_http = http_part(settings, base, "c-tuned", tuned)
    except BaseException:
        for launched in waiting:
            launched.stop()
        raise
    say(N_("(c) POST /chat through gunicorn, then at a fixed rate (open loop)"))
    with gateway as server:
        report.http = http_part(settings, base, "c", server)
        if report.http[0].tool == "wrk" and not settings.quick:
            check = _load({**base, **_at(server), "kind": "http", "part": "c", "clients": [top]})
            report.cross_check += check
        rate = settings.open_rate or max(50.0, round(max(m.throughput for m in report.http) / 2))
        report.open_http = _load(
            {
                **base,
                **_at(server),
                "kind": "http-open",
                "part": "c",
                "rate": rate,
                "connections": OPEN_CONNECTIONS,
            }
        )
    if report.raw_sql[0].tool == "pgbench" and not settings.quick:
        report.cross_check += _load({**base, "kind": "sql", "part": "a", "clients": [top]})


def _accept_parts(
    report: BenchReport,
    settings: BenchSettings,
    base: dict[str, object],
    say: Step,
) -> None:
    """(d): accept latency with slow runs in flight, in workers (split) and in the handler."""
    say(N_("(d) accept latency with {count} slow agent runs in flight"), count=SLOW_RUNS)
    url = str(base["database_url"])
    loads: list[dict[str, object]] = [
        {"loop": "open", "rate": ACCEPT_RATE, "connections": ACCEPT_CONNECTIONS}
    ]
    if not settings.quick:
        loads.insert(0, {"loop": "closed", "probes": PROBES})
    accept = {
        **base,
        "kind": "accept",
        "slow_runs": SLOW_RUNS,
        "seconds": settings.seconds * (1 if settings.quick else 2),
        "warmup": settings.warmup * (1 if settings.quick else 2),
    }
    _clear_queue(url, settings.tree)
    app = gateway_app(settings.tree)
    env = {
        "DATABASE_URL": url,
        "DB_SCHEMA": settings.tree,
        "BENCH_AGENT_SECONDS": str(settings.agent_seconds),
        "BENCH_TREE": settings.tree,
    }
    # Start all three processes at once; the inline server idles until its turn.
    inline = GatewayServer(
        "labs.bench.inline:app", env, workers=1, threads=SLOW_RUNS, graceful_stop=False
    ).launch()
    agent = _start_agent(env, settings)
    try:
        split = GatewayServer(app, env, workers=1, threads=SLOW_RUNS, graceful_stop=False)
        with split.launch() as server:
            assert agent.stdout is not None
            agent.stdout.readline()  # "ready": the store is built, the threads are starting
            window = (float(str(accept["warmup"])) + float(str(accept["seconds"])) + 1) * len(loads)
            backlog = SLOW_RUNS * (int(window / settings.agent_seconds) + 2)
            for number, load in enumerate(loads):
                spec = {**accept, **load, **_at(server), "mode": "split", "part": "d-split"}
                report.accept += _load({**spec, "backlog": backlog if number == 0 else 0})
        agent.send_signal(signal.SIGTERM)  # it finishes its runs while the monolith is measured
        report.slow_runs_started["split"] = _slow_runs_started(url, settings.tree)
        with inline as server:
            for load in loads:
                spec = {**accept, **load, **_at(server), "mode": "inline", "part": "d-inline"}
                report.accept += _load(spec)
    finally:
        inline.stop()
        _stop_agent(agent, settings.agent_seconds + 10)
    report.slow_runs_started["inline"] = (
        _slow_runs_started(url, settings.tree) - report.slow_runs_started["split"]
    )


def _start_agent(env: dict[str, str], settings: BenchSettings) -> subprocess.Popen[bytes]:
    """The split's workers: python -m labs.bench.agent, keeping 16 runs busy."""
    return subprocess.Popen(
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


def _stop_agent(agent: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM (the threads finish the run in hand), then SIGKILL if it hangs."""
    agent.send_signal(signal.SIGTERM)
    try:
        agent.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        agent.kill()
        agent.wait()
    if agent.stdout is not None:
        agent.stdout.close()


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
        raise RuntimeError(
            _("load generator failed:\n{output}").format(output=done.stderr.strip()[-3000:])
        )
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
