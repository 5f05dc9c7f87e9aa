"""The sandboxed launcher: the tree host (`python -m labs.checking.host ...`) started in a Sandbox.

It is a labs.checking.protocol.Launcher: `launch(spec)` copies `spec.tree` into a new
sandbox (links left out, readable by the sandbox's user only) and execs the
host there through the sandbox's trampoline, with three pipes: requests,
answers, and the host's stdout and stderr, read through a capped buffer.
The host it returns is a labs.checking.pipes.PipeHost whose kill() also kills every
process of the sandbox and removes it.

On Postgres the host may be given other credentials than the driver: the
grader opens the driver's connection with its own URL, and the launcher hands
the host the submission's own role (`database_url=`, `schema=`), which can
reach nothing but its schema. A server reached over TCP keeps the network
(one reached over its Unix socket needs none: the sandbox shows it the socket's
folder).

When a sandbox stops its submission (past the memory or process cap),
`stops` keeps why, so the grade can say it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from labs.checking.launch import HOST_MODULE, credentials_pipe, host_command
from labs.checking.pipes import PipeHost
from labs.checking.protocol import HostProcess, HostSpec, Launcher, StoreKind

from .box import Sandbox
from .limits import Limits
from .network import url_needs_network


class SandboxedHost(PipeHost):
    """A tree host running in a sandbox: a PipeHost whose kill() also frees the sandbox."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        requests_fd: int,
        answers_fd: int,
        output_fd: int,
        box: Sandbox,
        stops: list[str],
    ) -> None:
        super().__init__(
            process.pid, requests_fd, answers_fd, output_fd, kill_group=True, popen=process
        )
        self.box = box
        self.stops = stops

    def kill(self) -> None:
        """Kill the host and all it started (its namespace, its uid), then free the sandbox."""
        try:
            self.box.kill()
            super().kill()
        finally:
            self.box.close()
            if self.box.stopped:
                self.stops.append(self.box.stopped)


class SandboxedLauncher:
    """Starts each tree host in a sandbox of its own.

    `database_url` and `schema`, when given, replace the spec's for the host
    alone (the submission's role on Postgres); `module` is the host module
    to exec (a test may name a stand-in, from a folder it names in `expose`).
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        module: str = HOST_MODULE,
        database_url: str | None = None,
        schema: str | None = None,
        expose: Sequence[Path] = (),
    ) -> None:
        self.limits = limits
        self.module = module
        self.database_url = database_url
        self.schema = schema
        self.expose = list(expose)
        self.stops: list[str] = []  # why a sandbox stopped its submission, each time one did

    def host_spec(self, request: HostSpec) -> HostSpec:
        """The spec the host gets: the submission's credentials in place of the driver's."""
        if self.database_url is not None:
            request = replace(request, database_url=self.database_url)
        if self.schema is not None:
            request = replace(request, schema=self.schema)
        return request

    def launch(self, request: HostSpec) -> HostProcess:
        """Copy the tree into a new sandbox and exec the host there on three pipes."""
        spec = self.host_spec(request)
        url = spec.database_url
        box = Sandbox(
            self.limits,
            network=url_needs_network(url),
            expose=self.expose,
        )
        to_host, from_driver = os.pipe()  # requests: the driver writes, the host reads
        from_host, to_driver = os.pipe()  # answers: the host writes, the driver reads
        output_r, output_w = os.pipe()  # the host's fd 1 and 2, capped by PipeHost
        # The URL holds the role's password: a pipe the host alone inherits, never its argv.
        url_fd = credentials_pipe(url) if url else None
        passed = (to_host, to_driver) if url_fd is None else (to_host, to_driver, url_fd)
        try:
            tree = box.share(Path(spec.tree), Path(spec.tree).name)
            shared = replace(spec, tree=tree)
            command = host_command(shared, to_host, to_driver, sys.executable, url_fd)
            if self.module != HOST_MODULE:
                command[2] = self.module
            env = {"DATABASE_URL": url} if url else {}
            env |= (
                {"DB_SCHEMA": spec.schema}
                if spec.schema and spec.store == StoreKind.POSTGRES
                else {}
            )
            process = box.popen(
                command,
                env=env,
                pass_fds=passed,
                stdout=output_w,
                stderr=output_w,
            )
        except BaseException:
            box.close()
            for fd in (from_driver, from_host, output_r):
                os.close(fd)
            raise
        finally:
            for fd in (*passed, output_w):
                os.close(fd)  # the host's ends live on in the host only
        return SandboxedHost(process, from_driver, from_host, output_r, box, self.stops)


def _fits(launcher: SandboxedLauncher) -> Launcher:
    """Never called: mypy proves here that SandboxedLauncher is a protocol.Launcher."""
    return launcher
