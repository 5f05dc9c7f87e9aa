"""What one benchmark run is asked to do, and what it found: settings, figures, ratios."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .memory import MemoryCost
from .stats import Measurement

SLOW_RUNS = 16  # slow agent runs kept in flight during part (d)
PROBES = 4  # closed-loop probe clients in part (d)
ACCEPT_RATE = 50.0  # open-loop arrivals per second in part (d)
ACCEPT_CONNECTIONS = 64  # connections the open-loop generator may hold in part (d)
OPEN_CONNECTIONS = 32  # connections the open-loop generator may hold in part (c)


@dataclass(frozen=True)
class BenchSettings:
    """How long and how hard: --quick shortens every window and measures fewer levels."""

    quick: bool = False
    tree: str = "solution"
    # gunicorn for (c0), (c1), (c) and (c-tuned): processes x threads; two cores want two.
    workers: int = 2
    threads: int = 8
    open_rate: float | None = None  # (c) open loop; None: half of (c)'s closed-loop best

    @property
    def levels(self) -> list[int]:
        """Concurrent clients for (a), (b), (c0), (c1), (c) and (c-tuned)."""
        return [1, 16] if self.quick else [1, 4, 16]

    @property
    def seconds(self) -> int:
        """Measured window per load (whole seconds: pgbench and wrk take no fractions)."""
        return 1 if self.quick else 4

    @property
    def warmup(self) -> float:
        """Unmeasured start of each Python-driven load (connections, caches)."""
        return 0.2 if self.quick else 1.0

    @property
    def agent_seconds(self) -> float:
        """How long one slow agent run takes in part (d)."""
        return 1.0 if self.quick else 3.0

    @property
    def memory_sizes(self) -> list[int]:
        """Store sizes for the memory-store part."""
        return [10, 2_000] if self.quick else [10, 100_000]

    @property
    def memory_budget(self) -> float:
        """Seconds allowed to fill a memory store to one size (a scanning store is slow)."""
        return 0.5 if self.quick else 30.0


@dataclass
class BenchReport:
    """Everything one run measured, with the machine it ran on."""

    machine: dict[str, object]
    settings: dict[str, object]
    raw_sql: list[Measurement] = field(default_factory=list)  # (a)
    store: list[Measurement] = field(default_factory=list)  # (b)
    floor_http: list[Measurement] = field(default_factory=list)  # (c0)
    flask_floor: list[Measurement] = field(default_factory=list)  # (c1)
    http: list[Measurement] = field(default_factory=list)  # (c), closed loop
    tuned_http: list[Measurement] = field(default_factory=list)  # (c-tuned), closed loop
    open_http: list[Measurement] = field(default_factory=list)  # (c), open loop
    accept: list[Measurement] = field(default_factory=list)  # (d): split and inline
    cross_check: list[Measurement] = field(default_factory=list)  # Python loadgen beside tools
    memory: list[MemoryCost] = field(default_factory=list)
    slow_runs_started: dict[str, int] = field(default_factory=dict)

    def tools(self) -> dict[str, str]:
        """Which load generator drove each part."""
        return {name: found[0].tool for name, found in self.parts().items() if found}

    def parts(self) -> dict[str, list[Measurement]]:
        """The closed-loop parts by name, in the order the report lists them."""
        return {
            "a": self.raw_sql,
            "b": self.store,
            "c0": self.floor_http,
            "c1": self.flask_floor,
            "c": self.http,
            "c-tuned": self.tuned_http,
        }

    def ratios(self) -> dict[str, dict[int, float]]:
        """Throughput ratios per concurrency: b/a, c/a, c0/a, c/c0, c/c1 and c/c-tuned."""

        def ratio(top: list[Measurement], bottom: list[Measurement]) -> dict[int, float]:
            floor = {m.clients: m.throughput for m in bottom}
            return {
                m.clients: round(m.throughput / floor[m.clients], 2)
                for m in top
                if floor.get(m.clients)
            }

        return {
            "b/a": ratio(self.store, self.raw_sql),
            "c/a": ratio(self.http, self.raw_sql),
            "c0/a": ratio(self.floor_http, self.raw_sql),
            "c/c0": ratio(self.http, self.floor_http),
            "c/c1": ratio(self.http, self.flask_floor),
            "c/c-tuned": ratio(self.http, self.tuned_http),
        }

    def layer_costs(self) -> dict[str, float]:
        """Milliseconds per request at one client: database, store, server, Flask, route.

        At one client requests run one after another, so time per request is
        1/throughput and the layers add up: (a) is the database, (b) - (a) the
        store's own code, (c0) the HTTP server and the client round trip, (c1) -
        (c0) Flask reading and parsing the body, and (c) - (c1) - (b) what the
        route adds around the store (the fields, the key, the answer).
        """
        one = {
            name: 1000 / found[0].throughput
            for name, found in self.parts().items()
            if name != "c-tuned" and found and found[0].clients == 1 and found[0].throughput
        }
        if len(one) < 5:
            return {}
        return {
            "database": round(one["a"], 3),
            "store": round(one["b"] - one["a"], 3),
            "http_server": round(one["c0"], 3),
            "flask": round(one["c1"] - one["c0"], 3),
            "route": round(one["c"] - one["c1"] - one["b"], 3),
            "total": round(one["c"], 3),
        }

    def cpu_split(self) -> dict[str, float]:
        """CPU milliseconds per request at the top concurrency, by layer.

        Read from the processes' own CPU accounts, which a busy machine
        disturbs far less than it does throughput: Postgres's share of a
        request of (c), the store's (the client process of (b), which is
        nothing but the store), gunicorn's (the workers of (c0), whose app
        does nothing), Flask's (what the workers of (c1) spend beyond (c0)'s),
        and what the gateway's workers spend beyond those and the store (the route).
        """
        top = {name: found[-1].cpu_ms for name, found in self.parts().items() if found}
        try:
            store, server, flask = top["b"]["client"], top["c0"]["server"], top["c1"]["server"]
            database, gateway = top["c"]["postgres"], top["c"]["server"]
        except KeyError:
            return {}
        return {
            "database": database,
            "store": store,
            "http_server": server,
            "flask": round(flask - server, 3),
            "route": round(gateway - flask - store, 3),
            "total": round(database + gateway, 3),
        }

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view, ratios and layer costs included."""
        return {
            **asdict(self),
            "tools": self.tools(),
            "ratios": {
                name: {str(k): v for k, v in found.items()} for name, found in self.ratios().items()
            },
            "layer_costs_ms": self.layer_costs(),
            "cpu_ms_per_request": self.cpu_split(),
        }
