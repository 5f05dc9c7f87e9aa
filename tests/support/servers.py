"""Real servers on loopback for the tests that need sockets, and a raw HTTP exchange.

- `deployed_gateway`: a tree's gateway under gunicorn with the shipped
  deploy/gunicorn.conf.py (the kit's labs.bench.server.GatewayServer).
- `Nginx`: the real nginx binary with the shipped deploy/nginx/gateway.conf.template,
  in a prefix of its own (a temporary directory), in front of a deployed gateway.
- `DevServer`: `python -m <tree>`, Flask's own server, as a learner runs it.

Each is a context manager that starts the process, waits until /healthz answers,
and stops it (and removes its files) on the way out.
"""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from string import Template
from types import TracebackType
from typing import Self

from labs.bench.server import GatewayServer
from labs.pg.cluster import free_port
from labs.trees.finding import REPO_ROOT

NGINX = Path("/usr/sbin/nginx")
GUNICORN_CONFIG = REPO_ROOT / "deploy" / "gunicorn.conf.py"
NGINX_TEMPLATE = REPO_ROOT / "deploy" / "nginx" / "gateway.conf.template"
# The solution's gateway, as gunicorn is told to load it.
GATEWAY = "solution.gateway:create_app()"


@dataclass(frozen=True)
class Reply:
    """One HTTP response as read off the socket."""

    status: int
    headers: dict[str, str]
    body: bytes


def exchange(port: int, parts: Iterable[bytes], timeout: float = 30.0) -> Reply:
    """Send the parts of one raw request to 127.0.0.1:port and read the whole response.

    A server may answer (413, say) before it has read everything; whatever it
    did not want is then lost, and the response is read all the same.
    """
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            for part in parts:
                sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server stopped reading: its answer is already on the way
        return read_reply(sock)


def read_reply(sock: socket.socket) -> Reply:
    """Read one response: its head, then Content-Length bytes (or up to the close)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"the server closed the connection mid-answer: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "-1"))
    while length < 0 or len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return Reply(int(status_line.split()[1]), headers, body)


def request(port: int, method: str, path: str, body: bytes = b"", timeout: float = 30.0) -> Reply:
    """One plain request with a Content-Length, on a connection of its own."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return exchange(port, [head + body], timeout)


def chunked(method: str, path: str, body: bytes, size: int = 4096) -> list[bytes]:
    """A request whose body is sent with Transfer-Encoding: chunked, size bytes a chunk."""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return [head, *(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces), b"0\r\n\r\n"]


class _Process:
    """A server process with a log file, started and stopped as a context manager."""

    name = "server"

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix=f"koda-{self.name}-"))
        self.log = self.dir / "output.log"
        self.process: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> Mapping[str, str]:
        return os.environ

    def __enter__(self) -> Self:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=REPO_ROOT,
                env=dict(self.environment()),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RuntimeError(f"{self.name} did not start:\n{self.tail()}")
            time.sleep(0.1)
        return self

    def _healthy(self) -> bool:
        try:
            return request(self.port, "GET", "/healthz", timeout=2).status == 200
        except OSError:
            return False

    def tail(self) -> str:
        """The end of the process's output (and of any error log it keeps)."""
        texts = [p.read_text(errors="replace") for p in self.dir.glob("*.log")]
        return "\n".join(line for text in texts for line in text.splitlines()[-20:])

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def deployed_gateway(tree: str, env: Mapping[str, str] | None = None) -> GatewayServer:
    """A tree's gateway under gunicorn, set up by deploy/gunicorn.conf.py, on MOCK=1 unless
    env says otherwise.

    One worker process: each process has a memory store of its own, and a
    session made in one would be unknown to the other.
    """
    return GatewayServer(
        f"{tree}.gateway:create_app()",
        {"MOCK": "1", **(env or {})},
        workers=1,
        threads=int(runpy.run_path(str(GUNICORN_CONFIG))["threads"]),
        config=GUNICORN_CONFIG,
        start_timeout=60,
    )


class DevServer(_Process):
    """`MOCK=1 python -m <tree>`: Flask's development server, as the lab serves by default."""

    name = "devserver"

    def __init__(self, tree: str) -> None:
        super().__init__()
        self.tree = tree

    def command(self) -> list[str]:
        return [sys.executable, "-m", self.tree]

    def environment(self) -> Mapping[str, str]:
        quiet = {k: v for k, v in os.environ.items() if k not in ("SELFTEST", "DATABASE_URL")}
        return quiet | {"MOCK": "1", "HOST": "127.0.0.1", "PORT": str(self.port)}


class Nginx(_Process):
    """/usr/sbin/nginx, not a daemon, in a prefix of its own, proxying to upstream_port."""

    name = "nginx"

    def __init__(self, upstream_port: int) -> None:
        super().__init__()
        self.dir.chmod(0o755)  # nginx's workers drop root's rights, and keep temp files here
        server_block = Template(NGINX_TEMPLATE.read_text()).safe_substitute(
            GATEWAY_UPSTREAM=f"127.0.0.1:{upstream_port}", NGINX_LISTEN=f"127.0.0.1:{self.port}"
        )
        (self.dir / "gateway.conf").write_text(server_block)
        temp = "".join(
            f"    {kind}_temp_path {self.dir / kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        (self.dir / "nginx.conf").write_text(
            "daemon off;\n"
            "worker_processes 1;\n"
            f"pid {self.dir / 'nginx.pid'};\n"
            f"error_log {self.dir / 'error.log'} warn;\n"
            "events { worker_connections 1024; }\n"
            "http {\n"
            "    access_log off;\n"
            f"{temp}"
            f"    include {self.dir / 'gateway.conf'};\n"
            "}\n"
        )

    def command(self) -> list[str]:
        return [
            str(NGINX),
            "-p",
            str(self.dir),
            "-c",
            str(self.dir / "nginx.conf"),
            "-e",
            str(self.dir / "error.log"),
        ]
