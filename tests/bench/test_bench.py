"""The benchmark's parts: its arithmetic, its loops, its tools and fallbacks, one whole run."""

from __future__ import annotations

import time
import uuid

import psycopg2
import pytest
from sqlalchemy.engine import make_url

from labs.bench.loadgen import closed_loop, open_loop
from labs.bench.memory import measure_memory_store
from labs.bench.model import BenchReport, BenchSettings
from labs.bench.report import format_report
from labs.bench.runner import (
    FLASK_FLOOR_APP,
    FLOOR_APP,
    TUNED_APP,
    _load,
    http_part,
    raw_sql_part,
    run_bench,
)
from labs.bench.server import GatewayServer
from labs.bench.stats import Measurement, Tool, percentile
from labs.bench.tools import WITHOUT_ENV, find_tool, libpq_environment
from labs.pg.cluster import TempCluster
from tests.support.databases import scalar
from tests.support.servers import GATEWAY

pytestmark = pytest.mark.slow  # gunicorn, wrk and pgbench

QUICK = BenchSettings(quick=True)
# The tool that measures each part: pgbench for (a), the bench's own loop for (b), wrk for HTTP.
TOOLS = {"a": "pgbench", "b": "python", "c0": "wrk", "c1": "wrk", "c": "wrk", "c-tuned": "wrk"}


def measurement(part: str, clients: int, throughput: float, tool: Tool = "python") -> Measurement:
    """A made-up measurement for report tests."""
    return Measurement(part, clients, int(throughput), 1.0, throughput, 1.0, 2.0, 0, tool)


def made_up_report() -> BenchReport:
    """A report with every closed-loop part at 1 and 16 clients."""
    return BenchReport(
        machine={"cpus": 2, "python": "3.11", "postgres": "15", "platform": "x"},
        settings={"seconds": 1, "workers": 2, "threads": 8, "agent_seconds": 1},
        raw_sql=[measurement("a", 1, 2000, "pgbench"), measurement("a", 16, 8000, "pgbench")],
        store=[measurement("b", 1, 1000), measurement("b", 16, 3000)],
        floor_http=[measurement("c0", 1, 4000, "wrk"), measurement("c0", 16, 6000, "wrk")],
        flask_floor=[measurement("c1", 1, 1000, "wrk"), measurement("c1", 16, 4000, "wrk")],
        http=[measurement("c", 1, 500, "wrk"), measurement("c", 16, 2000, "wrk")],
        tuned_http=[measurement("c-tuned", 1, 520, "wrk"), measurement("c-tuned", 16, 2500, "wrk")],
    )


def new_session(database_url: str) -> str:
    """Insert a session into the solution's tables and return its id."""
    session_id = f"S-{uuid.uuid4().hex[:8]}"
    with psycopg2.connect(database_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO solution.sessions (id, user_id, title) VALUES (%s, 'ada', 'bench')",
            (session_id,),
        )
    connection.close()
    return session_id


def spec(database_url: str, session_id: str, clients: list[int]) -> dict[str, object]:
    """The load spec the runner hands to its parts."""
    return {
        "database_url": database_url,
        "schema": "solution",
        "tree": "solution",
        "session_id": session_id,
        "clients": clients,
        "warmup": 0.05,
        "seconds": 0.3,
    }


def test_percentiles_use_the_nearest_rank() -> None:
    """p50 of 1..100 is 50 and p99 is 99; an empty list gives 0."""
    values = [float(n) for n in range(1, 101)]
    assert (percentile(values, 0.5), percentile(values, 0.99), percentile([], 0.5)) == (
        50.0,
        99.0,
        0.0,
    )


def test_the_closed_loop_counts_operations_and_failures_after_the_warmup() -> None:
    """Two clients, one always failing: every measured operation is counted, half as errors."""
    outcome = closed_loop("t", [lambda n: True, lambda n: False], warmup=0.05, seconds=0.2)
    assert outcome.operations > 10 and outcome.clients == 2 and outcome.loop == "closed"
    assert 0 < outcome.errors < outcome.operations


def test_the_open_loop_times_requests_from_when_they_were_due_through_a_stall() -> None:
    """A 0.3 s stall on one connection: every request due meanwhile counts, and waits, late."""

    def send(connection: int, sequence: int) -> bool:
        if sequence == 5:
            time.sleep(0.3)
        return True

    outcome = open_loop("t", send, connections=1, rate=100, warmup=0, seconds=0.5)
    assert outcome.operations == 50 and outcome.loop == "open" and outcome.rate == 100
    # Requests 6 to 34 were due during the stall: at least a quarter of all went late.
    assert outcome.late >= 25 and outcome.p50_ms >= 50
    assert closed_loop("t", [lambda n: True], warmup=0, seconds=0.1).late == 0


def test_the_report_gives_every_ratio_and_judges_the_targets() -> None:
    """b/a at one client is judged against 0.45; the others, c/c-tuned too, are listed and never
    judged; tools are named."""
    report = made_up_report()
    ratios = report.ratios()
    assert ratios == {
        "b/a": {1: 0.5, 16: 0.38},
        "c/a": {1: 0.25, 16: 0.25},
        "c0/a": {1: 2.0, 16: 0.75},
        "c/c0": {1: 0.12, 16: 0.33},
        "c/c1": {1: 0.5, 16: 0.5},
        "c/c-tuned": {1: 0.96, 16: 0.8},
    }
    assert report.tools() == TOOLS
    text = format_report(report)
    assert "c/c-tuned throughput ratio: 1 client: 0.96, 16 clients: 0.80" in text
    assert [line for line in text.splitlines() if line.startswith("target")] == [
        "target b/a >= 0.45 at 1 client(s): met"
    ]
    report.store[0] = measurement("b", 1, 880)  # 0.44 of the raw insert: below the guard
    assert "target b/a >= 0.45 at 1 client(s): NOT met" in format_report(report)
    report.store[0] = measurement("b", 1, 900)  # 0.45 exactly: met
    assert "target b/a >= 0.45 at 1 client(s): met" in format_report(report)


def test_the_layer_costs_add_up_to_the_time_of_one_request() -> None:
    """Database + store + server + Flask + route = one request's time at one client (1 / (c))."""
    costs = made_up_report().layer_costs()
    assert costs["database"] == 0.5 and costs["store"] == 0.5 and costs["http_server"] == 0.25
    assert costs["flask"] == 0.75  # (c1) - (c0): 1 ms - 0.25 ms
    parts = sum(costs[name] for name in ("database", "store", "http_server", "flask", "route"))
    assert parts == pytest.approx(costs["total"]) and costs["total"] == 2.0


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "postgresql://koda:secret@127.0.0.1:5508/koda",
            {
                "PGHOST": "127.0.0.1",
                "PGPORT": "5508",
                "PGUSER": "koda",
                "PGPASSWORD": "secret",
                "PGDATABASE": "koda",
            },
        ),
        (
            "postgresql+psycopg2://postgres@/scratch?host=/tmp/koda-pg-x&port=6000",
            {
                "PGHOST": "/tmp/koda-pg-x",
                "PGPORT": "6000",
                "PGUSER": "postgres",
                "PGDATABASE": "scratch",
            },
        ),
    ],
)
def test_pgbench_gets_the_connection_from_the_url_tcp_or_socket(
    url: str, expected: dict[str, str]
) -> None:
    """A TCP URL and a socket-directory URL both become libpq's PG* variables."""
    assert libpq_environment(url) == expected


def test_a_tool_named_in_bench_without_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """BENCH_WITHOUT=wrk hides the installed wrk and leaves pgbench alone."""
    monkeypatch.delenv(WITHOUT_ENV, raising=False)
    installed = find_tool("wrk"), find_tool("pgbench")
    assert None not in installed, "the bench's tests need wrk and pgbench"
    monkeypatch.setenv(WITHOUT_ENV, "wrk")
    assert (find_tool("wrk"), find_tool("pgbench")) == (None, installed[1])
    assert find_tool("no-such-load-tool") is None


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_the_memory_part_times_both_operations_at_every_size(tree: str) -> None:
    """One cost per operation and size, each positive, at the rows the fill reached."""
    costs = measure_memory_store(tree, [10, 300], fill_budget=5.0)
    assert [(c.operation, c.target_rows) for c in costs] == [
        ("create_run", 10),
        ("append_message", 10),
        ("create_run", 300),
        ("append_message", 300),
    ]
    assert all(c.per_call_us > 0 and c.rows == c.target_rows for c in costs)


@pytest.mark.postgres
@pytest.mark.parametrize("without", ["", "pgbench"])
def test_the_raw_sql_part_inserts_with_pgbench_or_without_it(
    migrated_database: str, without: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part (a) fills the runs table without an error, with pgbench or, if missing, Python."""
    monkeypatch.setenv(WITHOUT_ENV, without)
    session_id = new_session(migrated_database)
    (found,) = raw_sql_part(QUICK, spec(migrated_database, session_id, [2]))
    assert found.tool == ("python" if without else "pgbench")
    assert found.operations > 0 and found.errors == 0 and found.clients == 2
    stored = scalar(
        migrated_database, "SELECT count(*) FROM solution.runs WHERE session_id = %s", session_id
    )
    assert stored >= found.operations


@pytest.mark.postgres
def test_pgbench_reaches_a_server_through_its_unix_socket(migrated_database: str) -> None:
    """Given a URL naming the socket directory, not a TCP host, part (a) still runs pgbench."""
    with psycopg2.connect(migrated_database) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('unix_socket_directories'), current_setting('port')")
        row = cursor.fetchone()
    connection.close()
    assert row is not None
    folder, port = str(row[0]).split(",")[0].strip(), str(row[1])
    over_tcp = make_url(migrated_database)
    socket_url = over_tcp.set(host=None, port=None, query={"host": folder, "port": port})
    socket_url_text = socket_url.render_as_string(hide_password=False)
    session_id = new_session(socket_url_text)
    (found,) = raw_sql_part(QUICK, spec(socket_url_text, session_id, [1]))
    assert found.tool == "pgbench" and found.operations > 0 and found.errors == 0


@pytest.mark.postgres
@pytest.mark.parametrize("without", ["", "wrk"])
def test_the_gateway_part_stores_one_run_per_accepted_request(
    migrated_database: str, without: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part (c), by wrk or (if missing) Python: each 202 is a run of its own, none an error."""
    monkeypatch.setenv(WITHOUT_ENV, without)
    session_id = new_session(migrated_database)
    env = {"DATABASE_URL": migrated_database, "DB_SCHEMA": "solution"}
    with GatewayServer(GATEWAY, env, workers=1, threads=4) as server:
        (found,) = http_part(QUICK, spec(migrated_database, session_id, [3]), "c", server)
    assert found.tool == ("python" if without else "wrk") and found.clients == 3
    assert found.operations > 0 and found.errors == 0
    stored = scalar(
        migrated_database, "SELECT count(*) FROM solution.runs WHERE session_id = %s", session_id
    )
    # Unique clientMessageIds: no request replays another; the warm-up adds runs of its own.
    assert stored >= found.operations


@pytest.mark.postgres
def test_the_http_floor_answers_202_and_stores_nothing(migrated_database: str) -> None:
    """Part (c0): gunicorn with the do-nothing app accepts every request and writes no row."""
    with GatewayServer(FLOOR_APP, {}, workers=1, threads=4) as server:
        (found,) = http_part(QUICK, spec(migrated_database, "no-session", [2]), "c0", server)
    assert found.operations > 0 and found.errors == 0 and found.part == "c0"
    assert scalar(migrated_database, "SELECT count(*) FROM solution.runs") == 0


@pytest.mark.postgres
def test_the_flask_floor_parses_the_body_answers_202_and_stores_nothing(
    migrated_database: str,
) -> None:
    """Part (c1): a Flask route that parses each body, under the same gunicorn, writes no row."""
    with GatewayServer(FLASK_FLOOR_APP, {}, workers=1, threads=4) as server:
        (found,) = http_part(QUICK, spec(migrated_database, "no-session", [2]), "c1", server)
        connection = server.connect()
        refused = connection.request("POST", "/chat", b"{not json", {"Content-Type": "x"}).status
        connection.close()
    assert found.operations > 0 and found.errors == 0 and found.part == "c1"
    assert refused == 500  # it really parses: a body that is not JSON fails the route
    assert scalar(migrated_database, "SELECT count(*) FROM solution.runs") == 0


@pytest.mark.postgres
def test_the_hand_tuned_path_stores_one_run_per_key_and_replays_like_the_tree(
    migrated_database: str,
) -> None:
    """Part (c-tuned): its prepared insert answers 202, replays a retry, and refuses a reuse."""
    session_id = new_session(migrated_database)
    env = {"DATABASE_URL": migrated_database, "DB_SCHEMA": "solution", "BENCH_TREE": "solution"}
    with GatewayServer(TUNED_APP, env, workers=1, threads=4) as server:
        (found,) = http_part(QUICK, spec(migrated_database, session_id, [2]), "c-tuned", server)
        connection = server.connect()
        body = {"sessionId": session_id, "message": "hi", "clientMessageId": "tuned-1"}
        first, again = connection.post_json("/chat", body), connection.post_json("/chat", body)
        reused = connection.post_json("/chat", {**body, "message": "other"})
        connection.close()
    assert found.operations > 0 and found.errors == 0 and found.part == "c-tuned"
    assert (first.status, again.status, reused.status) == (202, 202, 409)
    first_body, again_body = first.json(), again.json()
    assert isinstance(first_body, dict) and isinstance(again_body, dict)
    assert first_body["runId"] == again_body["runId"]
    assert (first.headers["idempotent-replayed"], again.headers["idempotent-replayed"]) == (
        "false",
        "true",
    )
    stored = scalar(
        migrated_database, "SELECT count(*) FROM solution.runs WHERE session_id = %s", session_id
    )
    assert stored >= found.operations + 1


@pytest.mark.postgres
def test_the_open_loop_gateway_load_posts_at_the_asked_rate(migrated_database: str) -> None:
    """(c) open loop: every request due in the window is answered 202 and stored."""
    session_id = new_session(migrated_database)
    env = {"DATABASE_URL": migrated_database, "DB_SCHEMA": "solution"}
    with GatewayServer(GATEWAY, env, workers=1, threads=4) as server:
        load = {
            **spec(migrated_database, session_id, [1]),
            "kind": "http-open",
            "part": "c",
            "port": server.port,
            "rate": 40,
            "connections": 4,
            "warmup": 0,
            "seconds": 0.5,
        }
        (found,) = _load(load)
    assert (found.loop, found.rate, found.operations, found.errors) == ("open", 40, 20, 0)
    stored = scalar(
        migrated_database, "SELECT count(*) FROM solution.runs WHERE session_id = %s", session_id
    )
    assert stored == 20


@pytest.mark.postgres
def test_a_quick_run_reports_every_part_with_its_tool_and_the_ratios(
    pg_cluster: TempCluster,
) -> None:
    """bench --quick: (a) pgbench, (b) Python, (c0) to (c-tuned) wrk, open loop, (d), memory."""
    if find_tool("pgbench") is None or find_tool("wrk") is None:
        pytest.fail("the bench's tests need pgbench and wrk (the CI setup installs them)")
    report = run_bench(QUICK, pg_cluster.url(), say=lambda line: None)
    shape = report.as_dict()
    assert report.tools() == TOOLS
    for part in report.parts().values():
        assert [m.clients for m in part] == [1, 16]
        assert all(m.operations > 0 and m.errors == 0 for m in part)
    assert [m.loop for m in report.open_http] == ["open"]
    assert [(m.part, m.loop) for m in report.accept] == [("d-split", "open"), ("d-inline", "open")]
    assert {(c.operation, c.target_rows) for c in report.memory} == {
        (operation, rows)
        for operation in ("create_run", "append_message")
        for rows in QUICK.memory_sizes
    }
    ratios, costs, cpu = shape["ratios"], shape["layer_costs_ms"], shape["cpu_ms_per_request"]
    assert isinstance(ratios, dict) and isinstance(costs, dict) and isinstance(cpu, dict)
    assert set(ratios) == {"b/a", "c/a", "c0/a", "c/c0", "c/c1", "c/c-tuned"}
    assert all(set(found) == {"1", "16"} for found in ratios.values())
    layers = {"database", "store", "http_server", "flask", "route", "total"}
    assert set(costs) == layers
    assert set(cpu) == layers
    assert set(report.http[-1].cpu_ms) == {"postgres", "server"}
    text = format_report(report)
    assert "target b/a >= 0.45 at 1 client(s)" in text and "c/c-tuned throughput ratio" in text
