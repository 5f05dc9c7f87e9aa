"""The Python load generator: clients on threads, in a process of its own.

Closed loop (each client sends, waits, sends again) for parts (a) to (c)
when pgbench or wrk is missing, and as a cross-check of them; open loop (a
fixed arrival rate, see open_loop) for the open-loop rows of (c) and (d).
Debian's archive holds no open-loop HTTP generator that corrects for
coordinated omission (wrk2 and vegeta are not packaged; hey only throttles
closed-loop workers), and the open-loop rates here are modest, so threads
are enough; when the generator itself falls behind, the request counts late.

python -m labs.bench.loadgen '<json spec>' prints one JSON list of
Measurements. Running apart from the bench's own process keeps the clients
off the server's and the orchestrator's interpreter locks.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, replace

from .agent import SLOW_MESSAGE
from .cpu import Meter, per_operation, pids_meter, postgres_meter, sample, self_meter
from .httpclient import HttpConnection
from .stats import Measurement, summarize

# One client: called with a sequence number, returns True when the operation succeeded.
Operation = Callable[[int], bool]


def closed_loop(
    part: str,
    clients: list[Operation],
    warmup: float,
    seconds: float,
    meters: dict[str, Meter] | None = None,
) -> Measurement:
    """Run every client back to back for warmup + seconds; measure only after the warmup."""
    start = threading.Barrier(len(clients) + 1)
    results: list[tuple[list[float], int]] = []
    lock = threading.Lock()
    window: dict[str, float] = {}

    def loop(operation: Operation) -> None:
        latencies: list[float] = []
        errors = 0
        start.wait()
        begin, end = window["begin"], window["end"]
        sequence = 0
        while True:
            t0 = time.perf_counter()
            if t0 >= end:
                break
            ok = operation(sequence)
            sequence += 1
            if t0 >= begin:
                latencies.append(time.perf_counter() - t0)
                errors += 0 if ok else 1
        with lock:
            results.append((latencies, errors))

    threads = [threading.Thread(target=loop, args=(op,)) for op in clients]
    for thread in threads:
        thread.start()
    now = time.perf_counter()
    window["begin"], window["end"] = now + warmup, now + warmup + seconds
    start.wait()
    cpu = _meter_window(meters or {}, window["begin"], window["end"])
    for thread in threads:
        thread.join()
    latencies = [value for found, _ in results for value in found]
    elapsed = max(time.perf_counter(), window["end"]) - window["begin"]
    measured = summarize(part, len(clients), latencies, elapsed, sum(e for _, e in results))
    return replace(measured, cpu_ms=per_operation(*cpu, measured.operations))


def _meter_window(
    meters: dict[str, Meter], begin: float, end: float
) -> tuple[dict[str, float], dict[str, float]]:
    """Read the meters at the window's start and end (this thread sleeps in between)."""
    time.sleep(max(0.0, begin - time.perf_counter()))
    before = sample(meters)
    time.sleep(max(0.0, end - time.perf_counter()))
    return before, sample(meters)


def open_loop(
    part: str,
    send: Callable[[int, int], bool],
    connections: int,
    rate: float,
    warmup: float,
    seconds: float,
    meters: dict[str, Meter] | None = None,
) -> Measurement:
    """Send at a fixed arrival rate; time each request from when it was due, not when it went.

    Request i is due at start + i / rate whatever happened to the others. A
    closed loop waits for each answer before the next request, so a stalled
    server also stalls the clock that measures it and the stall hides in a
    few slow samples ("coordinated omission"). Here, if every connection is
    busy, the next request simply goes late, and its lateness counts in its
    latency, as a user arriving on schedule would feel it. send(connection,
    sequence) posts one request and returns True on success.
    """
    lock = threading.Lock()
    counter = iter(range(1 << 62))
    start = time.perf_counter() + 0.05
    begin, end = start + warmup, start + warmup + seconds
    latencies: list[float] = []
    tally = {"errors": 0, "late": 0}

    def loop(connection: int) -> None:
        while True:
            with lock:
                sequence = next(counter)
            due = start + sequence / rate
            if due >= end:
                return
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            sent = time.perf_counter()
            ok = send(connection, sequence)
            finished = time.perf_counter()
            if due >= begin:
                with lock:
                    latencies.append(finished - due)
                    tally["errors"] += 0 if ok else 1
                    tally["late"] += 1 if sent - due > 0.001 else 0

    threads = [threading.Thread(target=loop, args=(n,)) for n in range(connections)]
    for thread in threads:
        thread.start()
    cpu = _meter_window(meters or {}, begin, end)
    for thread in threads:
        thread.join()
    measured = summarize(part, connections, latencies, seconds, tally["errors"])
    cpu_ms = per_operation(*cpu, measured.operations)
    return replace(measured, loop="open", rate=rate, late=tally["late"], cpu_ms=cpu_ms)


def http_sender(
    spec: dict[str, object], connections: int, message: str
) -> Callable[[int, int], bool]:
    """send(connection, sequence) for open_loop: POST /chat on one of `connections` keep-alives."""
    port, tag = int(str(spec["port"])), uuid.uuid4().hex[:8]
    pool = [HttpConnection("127.0.0.1", port, timeout=120) for _ in range(connections)]
    for connection in pool:
        connection.open()
    head = json.dumps({"sessionId": spec["session_id"], "message": message})[:-1]
    headers = {"Content-Type": "application/json"}

    def send(connection: int, sequence: int) -> bool:
        body = f'{head}, "clientMessageId": "open-{tag}-{sequence}"}}'.encode()
        return pool[connection].request("POST", "/chat", body, headers).status == 202

    return send


def sql_clients(spec: dict[str, object], count: int) -> list[Operation]:
    """(a) Raw INSERT ... ON CONFLICT DO NOTHING, one connection per client."""
    import psycopg2

    table = f'"{spec["schema"]}".runs'
    statement = (
        f"INSERT INTO {table} (id, session_id, status, idempotency_key, input, "
        "prompt_tokens, completion_tokens, created_at, updated_at) "
        "VALUES (%s, %s, 'pending', %s, 'bench', 0, 0, now(), now()) "
        "ON CONFLICT (idempotency_key) DO NOTHING"
    )
    from ulid import ULID

    def client(number: int) -> Operation:
        connection = psycopg2.connect(str(spec["database_url"]))
        connection.autocommit = True  # one transaction per insert, as the store does
        cursor = connection.cursor()
        prefix = f"sql-{count}-{number}-{uuid.uuid4().hex[:8]}"

        def insert(sequence: int) -> bool:
            cursor.execute(statement, (str(ULID()), spec["session_id"], f"{prefix}-{sequence}"))
            return True

        return insert

    return [client(n) for n in range(count)]


def store_clients(spec: dict[str, object], count: int) -> list[Operation]:
    """(b) The tree's SqlStore.create_run, one store shared by the threads (as in a server)."""
    import importlib

    infra = importlib.import_module(f"{spec['tree']}.infra")
    store = infra.make_store(
        {"DATABASE_URL": str(spec["database_url"]), "DB_SCHEMA": str(spec["schema"])}
    )
    session_id = str(spec["session_id"])

    def client(number: int) -> Operation:
        prefix = f"store-{count}-{number}-{uuid.uuid4().hex[:8]}"

        def create(sequence: int) -> bool:
            return bool(store.create_run(session_id, "bench", f"{prefix}-{sequence}").created)

        return create

    return [client(n) for n in range(count)]


def http_clients(spec: dict[str, object], count: int) -> list[Operation]:
    """(c) POST /chat through the server, one keep-alive connection per client."""

    def client(number: int) -> Operation:
        connection = HttpConnection("127.0.0.1", int(str(spec["port"])))
        connection.open()
        prefix = f"http-{count}-{number}-{uuid.uuid4().hex[:8]}"
        # The body is formatted, not json.dumps'ed, per request: the client must stay cheap.
        head = json.dumps(
            {"sessionId": spec["session_id"], "message": spec.get("message", "bench")}
        )[:-1]
        headers = {"Content-Type": "application/json"}

        def post(sequence: int) -> bool:
            body = f'{head}, "clientMessageId": "{prefix}-{sequence}"}}'.encode()
            return connection.request("POST", "/chat", body, headers).status == 202

        return post

    return [client(n) for n in range(count)]


def accept_under_load(spec: dict[str, object], meters: dict[str, Meter]) -> Measurement:
    """(d) Probe clients POST /chat while 16 slow agent runs are in flight."""
    port, slow = int(str(spec["port"])), int(str(spec["slow_runs"]))
    session_id, tag = str(spec["session_id"]), uuid.uuid4().hex[:8]
    stop = threading.Event()

    def slow_payload(number: int, sequence: int) -> dict[str, str]:
        return {
            "sessionId": session_id,
            "message": SLOW_MESSAGE,
            "clientMessageId": f"slow-{tag}-{number}-{sequence}",
        }

    def keep_one_in_flight(number: int) -> None:
        connection = HttpConnection("127.0.0.1", port, timeout=120)
        sequence = 0
        while not stop.is_set():
            connection.post_json("/chat", slow_payload(number, sequence))
            sequence += 1
        connection.close()

    busy: list[threading.Thread] = []
    if spec["mode"] == "inline":
        # The monolith: each slow request holds a server thread until its run is done.
        # Daemon threads: once measured, the process may exit with slow requests in flight.
        busy = [
            threading.Thread(target=keep_one_in_flight, args=(n,), daemon=True) for n in range(slow)
        ]
        for thread in busy:
            thread.start()
    else:
        # The split: the runs are accepted at once; the workers keep `slow` of them running.
        connection = HttpConnection("127.0.0.1", port)
        for sequence in range(int(str(spec["backlog"]))):
            connection.post_json("/chat", slow_payload(0, sequence))
        connection.close()
    warmup, seconds = float(str(spec["warmup"])), float(str(spec["seconds"]))
    if spec.get("loop") == "open":
        connections = int(str(spec["connections"]))
        send = http_sender(spec, connections, "probe")
        rate = float(str(spec["rate"]))
        measured = open_loop(str(spec["part"]), send, connections, rate, warmup, seconds, meters)
    else:
        probes = http_clients({**spec, "message": "probe"}, int(str(spec["probes"])))
        measured = closed_loop(str(spec["part"]), probes, warmup, seconds, meters)
    stop.set()
    return measured


KINDS: dict[str, Callable[[dict[str, object], int], list[Operation]]] = {
    "sql": sql_clients,
    "store": store_clients,
    "http": http_clients,
}


def meters_for(spec: dict[str, object]) -> dict[str, Meter]:
    """The CPU meters a load reads: this client, the server's workers, local Postgres."""
    meters = {"client": self_meter()}
    workers = spec.get("server_pids")
    if isinstance(workers, list):
        pids = {int(pid) for pid in workers}
        meters["server"] = pids_meter(lambda: pids)
    database = postgres_meter(str(spec["database_url"])) if spec.get("database_url") else None
    if database is not None:
        meters["postgres"] = database
    return meters


def run(spec: dict[str, object]) -> list[Measurement]:
    """Run the spec's kind at each of its concurrency levels, one after the other."""
    meters = meters_for(spec)
    if spec["kind"] == "accept":
        return [accept_under_load(spec, meters)]
    warmup, seconds = float(str(spec["warmup"])), float(str(spec["seconds"]))
    if spec["kind"] == "http-open":
        connections = int(str(spec["connections"]))
        send = http_sender(spec, connections, "bench")
        rate = float(str(spec["rate"]))
        return [open_loop(str(spec["part"]), send, connections, rate, warmup, seconds, meters)]
    make = KINDS[str(spec["kind"])]
    levels = spec["clients"]
    assert isinstance(levels, list)
    return [
        closed_loop(str(spec["part"]), make(spec, int(n)), warmup, seconds, meters) for n in levels
    ]


if __name__ == "__main__":
    measurements = run(json.loads(sys.argv[1]))
    print(json.dumps([asdict(m) for m in measurements]))
