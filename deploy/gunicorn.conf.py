"""gunicorn's settings for the gateway in production: `gunicorn -c deploy/gunicorn.conf.py
'<tree>.gateway:create_app()'`, always behind nginx (deploy/nginx/gateway.conf.template).

A gthread worker gives each connection a thread for as long as the request
takes to arrive, so a client that trickles its bytes holds a thread; a handful
of them would hold them all. nginx reads every request whole before passing it
on, so the threads here only ever wait for the database, never for a client.
Options given on the command line (or in GUNICORN_CMD_ARGS) override these.
"""

import select
import threading

import psycopg2.extensions
from psycopg2.extensions import POLL_OK, POLL_READ, QueryCanceledError, connection

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

# The proxy already refused oversized headers; these are the same limits, in depth.
limit_request_line = 4094
limit_request_fields = 50
limit_request_field_size = 8190

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
