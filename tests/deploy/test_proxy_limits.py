"""nginx and gunicorn share one set of limits, and every refusal from either is JSON.

nginx (deploy/nginx/gateway.conf.template) refuses first: a line too long, a
body too big, too many requests from one address. gunicorn
(deploy/gunicorn.conf.py) allows at least what nginx passes on, so the client
never meets gunicorn's refusals through nginx; reached directly, gunicorn
refuses in JSON too. deploy/README.md ("Limits") tables the numbers, and a
test here holds the table, the template and the gunicorn file to each other.
"""

from __future__ import annotations

import json
import re
import runpy
import select
import socket
import time
from collections.abc import Iterator

import pytest

from labs.bench.server import GatewayServer
from labs.trees.finding import REPO_ROOT
from solution.gateway.requests import MAX_BODY_BYTES
from tests.conftest import IN_CI
from tests.support.servers import (
    GUNICORN_CONFIG,
    NGINX,
    NGINX_TEMPLATE,
    Nginx,
    Reply,
    deployed_gateway,
    exchange,
    read_reply,
)

TEMPLATE = NGINX_TEMPLATE.read_text()
GUNICORN = runpy.run_path(str(GUNICORN_CONFIG))
README = (REPO_ROOT / "deploy" / "README.md").read_text()

HOST = b"Host: 127.0.0.1\r\nConnection: close\r\n"
GET_HEALTHZ = b"GET /healthz HTTP/1.1\r\n" + HOST
POST_SESSIONS = b"POST /sessions HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
# A body that trickles in after complete headers: nginx counts it against its address.
TRICKLING = POST_SESSIONS + b"Content-Length: 4096\r\n\r\n{"


def get_healthz(line_bytes: int) -> bytes:
    """A GET /healthz with a request line line_bytes long (CRLF aside), padded in the query."""
    padding = b"a" * (line_bytes - len(b"GET /healthz? HTTP/1.1"))
    return b"GET /healthz?" + padding + b" HTTP/1.1\r\n" + HOST + b"\r\n"


def directive(name: str) -> list[int]:
    """The numbers in the template's `name ...;` directive (4k counts as 4096, 10s as 10)."""
    match = re.search(rf"^\s*{name} ([^;]*);", TEMPLATE, re.MULTILINE)
    assert match, f"{name} is not set in {NGINX_TEMPLATE.name}"
    numbers = re.findall(r"(\d+)(k?)", match.group(1))
    return [int(n) * (1024 if k else 1) for n, k in numbers]


def table_row(limit: str) -> tuple[int | None, int | None]:
    """The first number in the nginx and gunicorn cells of README's row for this limit."""
    for line in README.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0] == limit:
            return first_number(cells[1]), first_number(cells[2])
    raise AssertionError(f"deploy/README.md's limits table has no row {limit!r}")


def first_number(cell: str) -> int | None:
    """4,094 in "4,094 bytes (`...`)"; None in a cell that gives no number."""
    match = re.search(r"\d[\d,]*", cell)
    return int(match.group().replace(",", "")) if match else None


def is_json_error(reply: Reply) -> bool:
    """True if the reply is a JSON object naming the error and saying why."""
    if not reply.headers.get("content-type", "").startswith("application/json"):
        return False
    body = json.loads(reply.body)
    return isinstance(body, dict) and {"error", "message"} <= body.keys()


def connect(port: int, source: str, timeout: float = 5.0) -> socket.socket:
    """A connection to 127.0.0.1:port from another loopback address (another client to nginx)."""
    sock = socket.socket()
    sock.settimeout(timeout)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", port))
    return sock


@pytest.fixture(autouse=True)
def nginx_installed() -> None:
    """Skip without the nginx binary, except in CI, where it is required (.ci/run installs it)."""
    if not NGINX.exists():
        if IN_CI:
            pytest.fail(f"CI requires nginx, but {NGINX} is missing")
        pytest.skip(f"{NGINX} is missing: `apt-get install nginx` to run the proxy tests")


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[GatewayServer, Nginx]]:
    """The solution's gateway under gunicorn, and nginx in front of it."""
    if not NGINX.exists():
        pytest.skip(f"{NGINX} is missing")
    with deployed_gateway("solution") as gunicorn, Nginx(gunicorn.port) as nginx:
        yield gunicorn, nginx


def test_the_readme_table_the_template_and_gunicorn_agree() -> None:
    """deploy/README.md's limits are the template's, and gunicorn allows all nginx passes on."""
    buffers, buffer_size = directive("large_client_header_buffers")
    (first_buffer,) = directive("client_header_buffer_size")
    longest_line = buffer_size - len(b"\r\n")
    # nginx appends ", <address>" to X-Forwarded-For: at most 2 + 39 bytes (IPv6).
    assert GUNICORN["limit_request_line"] == longest_line
    assert GUNICORN["limit_request_field_size"] >= longest_line + 2 + 39
    # The smallest header, "a:" and CRLF, is 4 bytes; nginx may add Host and X-Forwarded-For.
    most_headers = (first_buffer + buffers * buffer_size) // len(b"a:\r\n") + 2
    assert GUNICORN["limit_request_fields"] >= most_headers
    assert directive("client_max_body_size") == [MAX_BODY_BYTES]
    assert GUNICORN["timeout"] < directive("proxy_read_timeout")[0]

    assert table_row("request line") == (longest_line, GUNICORN["limit_request_line"])
    assert table_row("a header line") == (longest_line, GUNICORN["limit_request_field_size"])
    head_kib = (first_buffer + buffers * buffer_size) // 1024
    assert table_row("header lines") == (head_kib, most_headers)
    assert GUNICORN["limit_request_fields"] == most_headers
    assert table_row("body") == (MAX_BODY_BYTES // 1024, MAX_BODY_BYTES // 1024)
    assert table_row("requests at once per address") == (
        directive("limit_conn per_client")[0],
        None,
    )
    assert table_row("headers' arrival, in all")[0] == directive("client_header_timeout")[0]
    assert table_row("body, between two reads")[0] == directive("client_body_timeout")[0]
    assert table_row("refused body, read and dropped")[0] == directive("lingering_time")[0]
    assert table_row("the gateway's answer") == (
        directive("proxy_read_timeout")[0],
        GUNICORN["timeout"],
    )


# Requests nginx refuses itself, and the status it refuses them with.
REFUSED_BY_NGINX = {
    "a request line that is not HTTP": (b"GARBAGE\r\n\r\n", 400),
    "a lowercase method": (b"get /healthz HTTP/1.1\r\n" + HOST + b"\r\n", 400),
    "no Host header": (b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 400),
    "an HTTP/2 preface over HTTP/1": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
    "two Content-Length headers": (
        POST_SESSIONS + b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        400,
    ),
    "a malformed chunk size": (
        POST_SESSIONS + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
        400,
    ),
    "TRACE": (b"TRACE / HTTP/1.1\r\n" + HOST + b"\r\n", 405),
    "a body over 64 KiB": (POST_SESSIONS + b"Content-Length: 70000\r\n\r\n{}", 413),
    "a 5,000-byte request line": (get_healthz(5000), 414),
    "a 4,095-byte request line": (get_healthz(4095), 414),
    "a 5,000-byte header line": (GET_HEALTHZ + b"X-Big: " + b"a" * 5000 + b"\r\n\r\n", 431),
    "a transfer coding nginx does not know": (
        POST_SESSIONS + b"Transfer-Encoding: gzip\r\n\r\n",
        501,
    ),
    "HTTP/3.0 over HTTP/1": (b"GET /healthz HTTP/3.0\r\n" + HOST + b"\r\n", 505),
    "nginx's own error page": (b"GET /.proxy-error HTTP/1.1\r\n" + HOST + b"\r\n", 404),
}


@pytest.mark.parametrize("name", REFUSED_BY_NGINX)
def test_nginx_refuses_in_json(servers: tuple[GatewayServer, Nginx], name: str) -> None:
    """Each request nginx refuses itself gets its status and a JSON error, not nginx's HTML."""
    request, status = REFUSED_BY_NGINX[name]
    reply = exchange(servers[1].port, [request], timeout=10)
    assert reply.status == status, reply
    assert is_json_error(reply), reply


def test_nginx_answers_a_json_503_when_gunicorn_is_down() -> None:
    """With gunicorn stopped, nginx's 502 becomes a JSON 503 with Retry-After."""
    with deployed_gateway("solution") as gunicorn, Nginx(gunicorn.port) as nginx:
        assert gunicorn.process is not None
        gunicorn.process.terminate()
        gunicorn.process.wait(timeout=15)
        reply = exchange(nginx.port, [GET_HEALTHZ + b"\r\n"])
    assert (reply.status, reply.headers.get("retry-after")) == (503, "1")
    assert json.loads(reply.body)["error"] == "gateway_unavailable"


# The gateway's own errors: nginx passes them on as they are.
GATEWAY_ERRORS = {
    "a body that is not an object": (POST_SESSIONS + b"Content-Length: 2\r\n\r\n[]", 400),
    "an unknown path": (b"GET /nowhere HTTP/1.1\r\n" + HOST + b"\r\n", 404),
    "a method the route lacks": (b"DELETE /sessions HTTP/1.1\r\n" + HOST + b"\r\n", 405),
}


@pytest.mark.parametrize("name", GATEWAY_ERRORS)
def test_the_gateways_own_errors_pass_through_nginx_untouched(
    servers: tuple[GatewayServer, Nginx], name: str
) -> None:
    """nginx's error pages are for its own refusals: the gateway's JSON comes back as it was."""
    request, status = GATEWAY_ERRORS[name]
    gunicorn, nginx = servers
    direct = exchange(gunicorn.port, [request])
    proxied = exchange(nginx.port, [request])
    assert (proxied.status, proxied.body) == (direct.status, direct.body) == (status, direct.body)
    assert is_json_error(proxied), proxied


def test_what_nginx_passes_on_gunicorn_accepts(servers: tuple[GatewayServer, Nginx]) -> None:
    """The longest request line, longest header and most headers nginx allows reach the app."""
    nginx = servers[1]
    longest = GUNICORN["limit_request_line"]
    forwarded = b"X-Forwarded-For: " + b"1" * (longest - len(b"X-Forwarded-For: "))
    sixty = b"".join(b"X-Header-%d: v\r\n" % n for n in range(60))
    many = b"a: b\r\n" * 990  # about as many 6-byte headers as nginx's 17 KiB takes
    for request in (
        get_healthz(longest),
        GET_HEALTHZ + forwarded + b"\r\n\r\n",
        GET_HEALTHZ + sixty + b"\r\n",
        GET_HEALTHZ + many + b"\r\n",
    ):
        reply = exchange(nginx.port, [request])
        assert reply.status == 200, (request[:60], reply)


# Requests gunicorn refuses when it is reached directly (or, the first, through nginx).
REFUSED_BY_GUNICORN = {
    "two Content-Type headers": (
        POST_SESSIONS + b"Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}",
        400,
    ),
    "a request line that is not HTTP": (b"GARBAGE\r\n\r\n", 400),
    "a 5,000-byte request line": (get_healthz(5000), 414),
    "a 9,000-byte header line": (GET_HEALTHZ + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n", 431),
    "an expectation gunicorn cannot meet": (
        POST_SESSIONS + b"Expect: 100-banana\r\nContent-Length: 2\r\n\r\n{}",
        417,
    ),
}


@pytest.mark.parametrize("name", REFUSED_BY_GUNICORN)
def test_gunicorn_refuses_in_json(servers: tuple[GatewayServer, Nginx], name: str) -> None:
    """gunicorn's own refusals are JSON like the gateway's, not its HTML page."""
    request, status = REFUSED_BY_GUNICORN[name]
    reply = exchange(servers[0].port, [request])
    assert reply.status == status, reply
    assert is_json_error(reply), reply


def test_two_content_types_are_a_json_400_through_nginx(
    servers: tuple[GatewayServer, Nginx],
) -> None:
    """nginx passes both Content-Type headers on; gunicorn's 400 for them arrives as JSON."""
    request, status = REFUSED_BY_GUNICORN["two Content-Type headers"]
    reply = exchange(servers[1].port, [request])
    assert reply.status == status, reply
    assert is_json_error(reply), reply


MALFORMED_CHUNKS = {
    "a chunk size that is not hex": b"zz\r\n{}\r\n0\r\n\r\n",
    "a chunk longer than its size": b"2\r\n{}}\r\n0\r\n\r\n",
    "a chunk size line with no end": b"2" * 9000,
}


@pytest.mark.parametrize("layer", ["gunicorn", "nginx"])
@pytest.mark.parametrize("name", MALFORMED_CHUNKS)
def test_a_malformed_chunked_body_is_a_json_400_at_either_layer(
    servers: tuple[GatewayServer, Nginx], layer: str, name: str
) -> None:
    """Broken chunked framing is the client's error, a 400, not the gateway's 500."""
    port = servers[0].port if layer == "gunicorn" else servers[1].port
    head = POST_SESSIONS + b"Transfer-Encoding: chunked\r\n\r\n"
    reply = exchange(port, [head + MALFORMED_CHUNKS[name]], timeout=10)
    assert reply.status == 400, reply
    assert is_json_error(reply), reply


def test_one_address_gets_a_few_requests_at_once_and_others_still_answer() -> None:
    """300 bodies trickling from one address: nginx reads 32, refuses the rest in JSON, frees them.

    /healthz from another address answers at once, and nginx closes the refused
    connections after lingering_time however long they go on trickling.
    """
    per_address = directive("limit_conn per_client")[0]
    (lingering,) = directive("lingering_time")
    with deployed_gateway("solution") as gunicorn, Nginx(gunicorn.port) as nginx:
        trickling = [connect(nginx.port, "127.0.0.3") for _ in range(300)]
        try:
            for sock in trickling:
                sock.sendall(TRICKLING)
            started = time.monotonic()
            with connect(nginx.port, "127.0.0.2") as other:
                other.sendall(GET_HEALTHZ + b"\r\n")
                healthz = read_reply(other)
            healthz_took = time.monotonic() - started

            answered = answered_within(trickling, seconds=2)
            refused = [read_reply(sock) for sock in answered]
            still_read = trickle_until_closed(trickling, deadline=lingering + 3)
        finally:
            for sock in trickling:
                sock.close()
    assert healthz.status == 200 and healthz_took < 2, (healthz, healthz_took)
    assert len(refused) == len(trickling) - per_address
    assert {r.status for r in refused} == {429}
    assert all(is_json_error(r) and r.headers.get("retry-after") == "1" for r in refused)
    assert still_read == per_address


def answered_within(sockets: list[socket.socket], seconds: float) -> list[socket.socket]:
    """The connections with an answer to read, once no more arrive for 0.5 s (or seconds pass)."""
    started = time.monotonic()
    answered: list[socket.socket] = []
    while time.monotonic() - started < seconds:
        time.sleep(0.5)
        now = select.select(sockets, [], [], 0)[0]
        if answered and len(now) == len(answered):
            break
        answered = now
    return answered


def trickle_until_closed(sockets: list[socket.socket], deadline: float) -> int:
    """Send a byte on each connection every 0.5 s until nginx has closed all it will.

    Returns how many were still open when the count stopped falling or the deadline passed.
    """
    open_ = list(sockets)
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        for sock in list(open_):
            try:
                sock.sendall(b"a")
            except OSError:
                open_.remove(sock)
        if len(open_) <= directive("limit_conn per_client")[0]:
            break
        time.sleep(0.5)
    return len(open_)
