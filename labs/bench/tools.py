"""Compiled load generators: pgbench for raw SQL, wrk for HTTP.

A load generator written in Python spends about as much CPU per request as
the server it measures, and on two cores that CPU comes out of the server's
share: the ratio then says more about the client than about the gateway.
pgbench (shipped with PostgreSQL) and wrk (Debian's package) cost a few
microseconds per request. When either is missing, the bench falls back to
its Python generator (loadgen.py) and says so in the report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from psycopg2.extensions import parse_dsn
from sqlalchemy.engine import make_url

from labs.pg.cluster import find_bindir
from labs.term.i18n import _

from .stats import Measurement, Tool, summarize

# Set to a comma-separated list (e.g. "pgbench,wrk") to act as if those binaries were absent.
WITHOUT_ENV = "BENCH_WITHOUT"


def find_tool(name: str) -> str | None:
    """The path of pgbench or wrk, or None when it is absent (or switched off by BENCH_WITHOUT)."""
    if name in os.environ.get(WITHOUT_ENV, "").split(","):
        return None
    found = shutil.which(name)
    if found is None and name == "pgbench":
        bindir = find_bindir()  # Debian keeps pgbench beside initdb, off the PATH
        if bindir is not None and (bindir / "pgbench").exists():
            found = str(bindir / "pgbench")
    return found


def libpq_environment(database_url: str) -> dict[str, str]:
    """PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE for a database URL.

    libpq parses the URL itself, so a socket directory given as ?host=/path
    works as well as a TCP host: the bench never assumes 127.0.0.1.
    """
    plain = make_url(database_url).set(drivername="postgresql")
    parts = parse_dsn(plain.render_as_string(hide_password=False))
    names = {
        "host": "PGHOST",
        "port": "PGPORT",
        "user": "PGUSER",
        "password": "PGPASSWORD",
        "dbname": "PGDATABASE",
    }
    return {names[key]: value for key, value in parts.items() if key in names and value}


def pgbench_script(schema: str) -> str:
    """The raw insert as a pgbench script: random text ids and keys, one session."""
    return (
        "\\set id random(1, 9000000000000000000)\n"
        "\\set key random(1, 9000000000000000000)\n"
        f'INSERT INTO "{schema}".runs (id, session_id, status, idempotency_key, input, '
        "prompt_tokens, completion_tokens, created_at, updated_at) "
        "VALUES (:id, :sid, 'pending', :key, 'bench', 0, 0, now(), now()) "
        "ON CONFLICT (idempotency_key) DO NOTHING;\n"
    )


def run_pgbench(
    pgbench: str, database_url: str, schema: str, session_id: str, clients: int, seconds: int
) -> Measurement:
    """Part (a) at one concurrency: pgbench, prepared protocol, every transaction logged."""
    with tempfile.TemporaryDirectory(prefix="koda-pgbench-") as folder:
        script = Path(folder) / "insert.sql"
        script.write_text(pgbench_script(schema))
        command = [
            pgbench,
            "--no-vacuum",
            "--protocol=prepared",
            f"--client={clients}",
            "--jobs=1",
            f"--time={seconds}",
            f"--file={script}",
            f"--define=sid={session_id}",
            "--log",
            f"--log-prefix={Path(folder) / 'tx'}",
        ]
        done = subprocess.run(
            command,
            env={**os.environ, **libpq_environment(database_url)},
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
        if done.returncode != 0:
            raise RuntimeError(
                _("pgbench failed:\n{output}").format(output=done.stderr.strip()[-2000:])
            )
        latencies, failed = [], 0
        for log in Path(folder).glob("tx*"):
            for line in log.read_text().splitlines():
                fields = line.split()
                # client transaction_no latency_us script_no epoch_s epoch_us
                if fields[2] in ("failed", "skipped"):
                    failed += 1
                else:
                    latencies.append(int(fields[2]) / 1e6)
    return _tagged(summarize("a", clients, latencies, seconds, failed), "pgbench")


WRK_SCRIPT = r"""
-- POST /chat with a clientMessageId no other request of the run uses.
-- Arguments after --: the session id and a tag unique to this run.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local threads = {}
local counter = 0
local head = ""

function setup(thread)
  thread:set("number", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  head = '{"sessionId":"' .. args[1] .. '","message":"bench","clientMessageId":"'
    .. args[2] .. '-' .. number .. '-'
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, head .. counter .. '"}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH-JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, '
      .. '"errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def run_wrk(
    wrk: str, part: str, port: int, session_id: str, clients: int, seconds: int
) -> Measurement:
    """Part (c) or (c0) at one concurrency: wrk, one thread, `clients` keep-alive connections."""
    with tempfile.TemporaryDirectory(prefix="koda-wrk-") as folder:
        script = Path(folder) / "chat.lua"
        script.write_text(WRK_SCRIPT)
        command = [
            wrk,
            "--threads=1",
            f"--connections={clients}",
            f"--duration={seconds}s",
            "--timeout=10s",
            f"--script={script}",
            f"http://127.0.0.1:{port}/chat",
            "--",
            session_id,
            uuid.uuid4().hex[:12],
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    found = [line for line in done.stdout.splitlines() if line.startswith("BENCH-JSON ")]
    if done.returncode != 0 or not found:
        output = (done.stdout + done.stderr).strip()[-2000:]
        raise RuntimeError(_("wrk failed:\n{output}").format(output=output))
    figures = json.loads(found[-1].removeprefix("BENCH-JSON "))
    elapsed = figures["duration_us"] / 1e6
    return _tagged(
        Measurement(
            part=part,
            clients=clients,
            operations=figures["requests"],
            seconds=round(elapsed, 3),
            throughput=round(figures["requests"] / elapsed, 1) if elapsed else 0.0,
            p50_ms=round(figures["p50_us"] / 1000, 2),
            p99_ms=round(figures["p99_us"] / 1000, 2),
            errors=figures["errors"],
        ),
        "wrk",
    )


def _tagged(measurement: Measurement, tool: Tool) -> Measurement:
    from dataclasses import replace

    return replace(measurement, tool=tool)
