"""The benchmark's parts: its arithmetic, its load loop, its report, one real load."""

from __future__ import annotations

from labs.bench.loadgen import closed_loop
from labs.bench.report import format_report
from labs.bench.runner import BenchReport, _load
from labs.bench.stats import Measurement, percentile


def measurement(part: str, clients: int, throughput: float) -> Measurement:
    """A made-up measurement for report tests."""
    return Measurement(part, clients, int(throughput), 1.0, throughput, 1.0, 2.0, 0)


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
    assert outcome.operations > 10 and outcome.clients == 2
    assert 0 < outcome.errors < outcome.operations


def test_the_report_gives_the_gateway_to_raw_sql_ratio_against_the_target() -> None:
    """(c)/(a) is printed per concurrency and judged against 0.5 at 16 clients."""
    report = BenchReport(
        machine={"cpus": 2, "python": "3.11", "postgres": "15", "platform": "x"},
        settings={"seconds": 1, "warmup": 0.1, "workers": 2, "threads": 8, "agent_seconds": 1},
        raw_sql=[measurement("a", 1, 1000), measurement("a", 16, 4000)],
        http=[measurement("c", 1, 800), measurement("c", 16, 1000)],
    )
    text = format_report(report)
    assert report.ratios() == {1: 0.8, 16: 0.25}
    assert "1 client: 0.80, 16 clients: 0.25" in text and "NOT met" in text


def test_the_raw_sql_load_inserts_into_the_migrated_runs_table(migrated_database: str) -> None:
    """Part (a) runs in its own process against real tables, without a single error."""
    import psycopg2

    with psycopg2.connect(migrated_database) as connection, connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO solution.sessions (id, user_id, title) VALUES ('S', 'ada', 'bench')"
        )
    connection.close()
    (found,) = _load(
        {
            "kind": "sql",
            "part": "a",
            "database_url": migrated_database,
            "schema": "solution",
            "session_id": "S",
            "clients": [2],
            "warmup": 0.05,
            "seconds": 0.3,
        }
    )
    assert found.operations > 0 and found.errors == 0 and found.clients == 2
