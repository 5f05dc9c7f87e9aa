"""A tiny keep-alive HTTP/1.1 client, cheap enough that the load generator is not the bottleneck.

The machine has two cores shared by Postgres, the server and the clients;
http.client or requests would spend more CPU per request than this needs:
one sendall, one or two recv, and a Content-Length to find the end.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """A parsed HTTP response."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        """The body parsed as JSON (raises ValueError when it is not JSON)."""
        return json.loads(self.body)


class HttpConnection:
    """One persistent connection to host:port; reconnects when the server closed it."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self._sock: socket.socket | None = None
        self._buffer = b""

    def _connect(self) -> socket.socket:
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = b""
        self._sock = sock
        return sock

    def open(self) -> None:
        """Connect now, so a later request pays no connection setup."""
        if self._sock is None:
            self._connect()

    def close(self) -> None:
        """Close the connection."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Answer:
        """Send one request and read its response; retry once if an idle connection was closed."""
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n"
        ).encode("latin-1")
        for attempt in (1, 2):
            sock = self._sock or self._connect()
            try:
                sock.sendall(head + body)
                return self._read_answer(sock)
            except (ConnectionError, _ClosedBeforeAnswer):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def post_json(self, path: str, payload: object) -> Answer:
        """POST a JSON body."""
        return self.request(
            "POST", path, json.dumps(payload).encode(), {"Content-Type": "application/json"}
        )

    def _read_answer(self, sock: socket.socket) -> Answer:
        while b"\r\n\r\n" not in self._buffer:
            self._receive(sock, first=not self._buffer)
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(self._buffer) < length:
            self._receive(sock, first=False)
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Answer(int(status_line.split()[1]), headers, body)

    def _receive(self, sock: socket.socket, *, first: bool) -> None:
        chunk = sock.recv(65536)
        if not chunk:
            if first:
                raise _ClosedBeforeAnswer
            raise BrokenAnswerError("the server closed the connection mid-answer")
        self._buffer += chunk


class BrokenAnswerError(Exception):
    """The connection ended part-way through an answer (never retried: it may have landed)."""


class _ClosedBeforeAnswer(Exception):
    """The server had closed the idle connection: the request was never read."""
