"""gunicorn's settings for the gateway in production: `gunicorn -c deploy/gunicorn.conf.py
'<tree>.gateway:create_app()'`, always behind nginx (deploy/nginx/gateway.conf.template).

A gthread worker gives each connection a thread for as long as the request
takes to arrive, so a client that trickles its bytes holds a thread; a handful
of them would hold them all. nginx reads every request whole before passing it
on, so the threads here only ever wait for the database, never for a client.
Options given on the command line (or in GUNICORN_CMD_ARGS) override these.
"""

from __future__ import annotations

import json
import select
import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

import gunicorn.util  # type: ignore[import-untyped]
import psycopg2.extensions
from gunicorn.http.errors import ParseException  # type: ignore[import-untyped]
from psycopg2.extensions import POLL_OK, POLL_READ, QueryCanceledError, connection
from werkzeug.exceptions import BadRequest
from werkzeug.http import HTTP_STATUS_CODES

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

# Only nginx talks to gunicorn: loopback here; docker-compose.yml binds 0.0.0.0:3001
# inside the compose network, where nothing is published but nginx's port.
bind = "127.0.0.1:3001"

# Each process calls create_app() once, and so builds its own store and connection pool;
# the threads share that pool, so a process never needs more connections than threads.
worker_class = "gthread"
workers = 2
threads = 8

# A request that takes longer than this is stuck: the worker is killed and replaced.
timeout = 30
graceful_timeout = 20
# nginx keeps its connections to gunicorn open between requests (upstream keepalive).
keepalive = 15

# nginx refuses first (deploy/README.md, "Limits"); these allow at least what it passes on,
# so gunicorn never refuses a request that got through nginx.
# - The request line: nginx's 4 KiB buffer holds 4,094 bytes and the CRLF; so does this.
limit_request_line = 4094
# - A header line: nginx passes at most 4,094 bytes, plus ", <client address>" (at most
#   41 bytes) that it appends to X-Forwarded-For.
limit_request_field_size = 8190
# - The number of headers: nginx counts bytes, not headers. Its whole request head fits in
#   1 KiB + 4 x 4 KiB, so it holds at most 17 KiB / 4 headers of 4 bytes ("a:" and CRLF),
#   and nginx may add two (Host, X-Forwarded-For).
NGINX_HEAD_BYTES = 1024 + 4 * 4096
limit_request_fields = NGINX_HEAD_BYTES // len(b"a:\r\n") + 2

# No control socket (gunicorn 25+): its default path is one per user, so a second master
# (another tree, a test) would take it over and remove it on exit. Manage gunicorn by signals.
control_socket_disable = True

# The access log is nginx's; errors and worker restarts go to stderr.
accesslog = None
errorlog = "-"


# A database that stops answering (its processes frozen, or a network that drops packets
# without a word) runs out none of the store's bounds: statement_timeout and lock_timeout
# are kept by the server's clock, and the kernel still acknowledges TCP keepalives for a
# frozen process. So each worker waits for Postgres on its own clock as well: at most
# DATABASE_WAIT_SECONDS for any answer, then psycopg2 closes the connection and the
# request is a 503. Once a wait has run out, later waits get HUNG_WAIT_SECONDS until the
# database answers again: the threads turn over fast, and /healthz never queues for long.
DATABASE_WAIT_SECONDS = 6.0  # past the store's statement_timeout (5 s), which comes first
HUNG_WAIT_SECONDS = 0.5


class DatabaseWaits:
    """psycopg2's wait for the server (its "wait callback"), bounded on the client's clock."""

    def __init__(self) -> None:
        self.hung = threading.Event()  # set while the last wait ran out and none has ended since

    def __call__(self, conn: connection) -> None:
        """Wait until conn's connect or query completes; raise QueryCanceledError past the bound."""
        limit = HUNG_WAIT_SECONDS if self.hung.is_set() else DATABASE_WAIT_SECONDS
        while (state := conn.poll()) != POLL_OK:
            waiting = select.poll()
            waiting.register(conn.fileno(), select.POLLIN if state == POLL_READ else select.POLLOUT)
            if not waiting.poll(limit * 1000):  # psycopg2 closes conn when this raises
                self.hung.set()
                raise QueryCanceledError(f"Postgres did not answer within {limit:g} s")
        self.hung.clear()


def post_fork(server: object, worker: object) -> None:
    """In each worker, before it loads the app: every psycopg2 wait there is bounded."""
    psycopg2.extensions.set_wait_callback(DatabaseWaits())


class _Worker(Protocol):
    """What post_worker_init uses of gunicorn's worker: the WSGI app it serves."""

    wsgi: WSGIApplication


class _Body(Protocol):
    """gunicorn's wsgi.input: a file-like reader of the request body."""

    def read(self, size: int | None = None) -> bytes: ...
    def readline(self, size: int | None = None) -> bytes: ...


def post_worker_init(worker: _Worker) -> None:
    """Make gunicorn's own answers and errors read like the gateway's, in each worker.

    gunicorn answers a request it cannot parse (400, 414, 431, 501) with an HTML
    page, and has no setting for that: write_error, the one function that writes
    it, is replaced by one writing JSON. And a chunked body whose framing is broken
    raises gunicorn's parse error inside the app, as the app reads the body; the
    app would answer it 500, so the reads raise Werkzeug's 400 instead.
    """
    gunicorn.util.write_error = write_json_error
    app = worker.wsgi

    def checked_app(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        environ["wsgi.input"] = FramingChecked(environ["wsgi.input"])
        return app(environ, start_response)

    worker.wsgi = checked_app


def write_json_error(sock: object, status: int, reason: str, message: str) -> None:
    """gunicorn's refusal as the gateway words its own: {"error": name, "message": why}."""
    name = HTTP_STATUS_CODES.get(status, reason)
    body = json.dumps({"error": name.lower().replace(" ", "_"), "message": message or reason})
    payload = body.encode() + b"\n"
    head = (
        f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    gunicorn.util.write_nonblock(sock, head.encode("latin-1") + payload)


class FramingChecked:
    """wsgi.input whose broken chunked framing is the client's error (400), not the app's."""

    def __init__(self, body: _Body) -> None:
        self.body = body

    def read(self, size: int | None = None) -> bytes:
        """Read up to size bytes (all by default), or raise BadRequest if the framing is bad."""
        try:
            return self.body.read(size)
        except ParseException as e:
            raise BadRequest(f"the chunked body is malformed: {e}") from None

    def readline(self, size: int | None = None) -> bytes:
        """Read one line, or raise BadRequest if the framing is bad."""
        try:
            return self.body.readline(size)
        except ParseException as e:
            raise BadRequest(f"the chunked body is malformed: {e}") from None

    def readlines(self, hint: int | None = None) -> list[bytes]:
        """Read the lines that remain."""
        return list(self)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.readline, b"")
