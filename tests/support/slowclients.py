"""Clients that send their requests a byte at a time, and a probe that times the real ones.

`python -m tests.support.slowclients [TREE] [CLIENTS]` shows the difference nginx
makes: the same trickling clients, first straight at gunicorn, then at nginx in
front of it, and how long /healthz and POST /chat take meanwhile.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from tests.support.servers import Nginx, deployed_gateway, request

BODY_HEAD = (
    b"POST /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 4096\r\n\r\n{"
)
HEADER_HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


class SlowClients:
    """count connections that each send one byte every interval, never finishing.

    Half trickle a POST body after a complete head; half never finish their headers.
    """

    def __init__(self, port: int, count: int, interval: float = 0.5) -> None:
        self.port, self.count, self.interval = port, count, interval
        self.sockets: list[socket.socket] = []
        self.rounds = 0  # how many bytes each open connection has trickled so far
        self.closed = 0  # connections the server hung up on
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)

    def __enter__(self) -> Self:
        for number in range(self.count):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(BODY_HEAD if number % 2 == 0 else HEADER_HEAD)
            self.sockets.append(sock)
        self._thread.start()
        return self

    def _trickle(self) -> None:
        while not self._stop.wait(self.interval):
            for sock in list(self.sockets):
                try:
                    sock.sendall(b"a")
                except OSError:  # the server closed it (a timeout, say)
                    self.sockets.remove(sock)
                    self.closed += 1
            self.rounds += 1

    def wait_for_rounds(self, rounds: int) -> None:
        """Block until every connection has trickled this many bytes after its head."""
        while self.rounds < rounds and self._thread.is_alive():
            time.sleep(self.interval / 4)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        for sock in self.sockets:
            sock.close()


@dataclass
class Probe:
    """What /healthz, POST /sessions and POST /chat answered, and how long each took."""

    statuses: list[int | None] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def line(self) -> str:
        """One line for a person: each endpoint's status (or no answer) and time."""
        names = ["GET /healthz", "POST /sessions", "POST /chat"]
        return "; ".join(
            f"{name} {'no answer' if status is None else status} after {took * 1000:.0f} ms"
            for name, status, took in zip(names, self.statuses, self.seconds, strict=False)
        )


def probe(port: int, timeout: float) -> Probe:
    """Ask for /healthz, then make a session and POST /chat to it, each on a new connection."""
    result = Probe()
    session_id = "none"
    for method, path in (("GET", "/healthz"), ("POST", "/sessions"), ("POST", "/chat")):
        bodies = {
            "/sessions": {"userId": "ada"},
            "/chat": {"sessionId": session_id, "message": "hi"},
        }
        body = json.dumps(bodies[path]).encode() if path in bodies else b""
        started = time.monotonic()
        try:
            answer = request(port, method, path, body, timeout=timeout)
        except TimeoutError:
            result.statuses.append(None)
            result.seconds.append(time.monotonic() - started)
            break
        result.statuses.append(answer.status)
        result.seconds.append(time.monotonic() - started)
        if path == "/sessions" and answer.status == 201:
            session_id = json.loads(answer.body)["sessionId"]
    return result


def main(tree: str = "solution", clients: int = 32, timeout: float = 10.0) -> None:
    """Print what the same slow clients do to gunicorn alone and to nginx in front of it."""
    with deployed_gateway(tree) as gunicorn, Nginx(gunicorn.port) as nginx:
        print(f"{tree} gateway, gunicorn gthread, 1 worker x {gunicorn.threads} threads, MOCK=1")
        print(f"{clients} slow clients, one byte each every 0.5 s")
        for label, port in (("gunicorn alone", gunicorn.port), ("nginx in front", nginx.port)):
            print(f"  {label:15} idle: {probe(port, timeout).line()}")
            with SlowClients(port, clients) as slow:
                slow.wait_for_rounds(3)
                print(f"  {label:15} slow: {probe(port, timeout).line()}")
            time.sleep(1)  # let gunicorn's threads see their clients go


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(arguments[0] if arguments else "solution", int(arguments[1]) if arguments[1:] else 32)
