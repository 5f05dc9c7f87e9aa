"""What a launcher, a host and the driver agree on: the spec, the process, the errors.

    StoreKind: MEMORY "memory" | POSTGRES "postgres"      the store the checks run on
    HostSpec(tree: Path, store: StoreKind | "keys", database_url: str | None,
             schema: str | None, package: str)          frozen, hashable
        what to host ("keys", KEYS_ONLY: a second process that only computes keys).
        `package` is the name the tree is imported under
        (labs.trees.finding.package_for(root)); `schema` the Postgres schema of its tables.
    host_spec(tree, package, store, database_url, schema) -> HostSpec
        the spec the driver uses: schema defaults to $DB_SCHEMA on Postgres,
        else the package.
    MAX_BATCH, MAX_BURST                        the most requests one `batch` request
                                                carries, the most copies one `burst` runs

    Launcher (Protocol):  launch(spec: HostSpec) -> HostProcess

    HostProcess (Protocol):
        pid: int
        send(message: dict) -> None            one request, as one JSON line
        receive(timeout: float) -> dict        the next answer; raises HostTimeoutError,
                                               HostGoneError (EOF, the host died) or
                                               HostProtocolError (not a JSON object)
        kill() -> None                         the host and everything it started
        stderr_tail() -> str                   the end of the host's stdout+stderr,
                                               untrusted text
        mark_output() -> None                  start keeping the host's output afresh
        output_since_mark() -> str             what the tree printed since then (its
                                               stdout+stderr, capped), untrusted text

The launchers are in launch.py (fork, exec) and labs/sandbox/launcher.py; the
requests and answers a host understands are described in host.py. This
module imports no other of the kit's, so host, launch and the sandbox can all
depend on it without depending on each other.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, Literal, Protocol

from .errors import HostError, HostGoneError, HostProtocolError, HostTimeoutError

__all__ = [
    "HELLO",
    "KEYS_ONLY",
    "MAX_BATCH",
    "MAX_BURST",
    "HostError",
    "HostGoneError",
    "HostProcess",
    "HostProtocolError",
    "HostSpec",
    "HostStore",
    "HostTimeoutError",
    "Launcher",
    "StoreKind",
    "host_spec",
]


class StoreKind(StrEnum):
    """The store the checks run on: the tree's MemoryStore (MOCK=1) or its SqlStore."""

    MEMORY = "memory"
    POSTGRES = "postgres"


HELLO: Final = "hello"  # the id of a host's first answer: the tree imported, or why not
KEYS_ONLY: Final = "keys"  # the store of a host that only computes keys (check 3's second process)
HostStore = StoreKind | Literal["keys"]  # what a host opens: a store, or none (KEYS_ONLY)
# A host refuses a `batch` request of more calls, and a `burst` of more copies.
MAX_BATCH: Final = 256
MAX_BURST: Final = 64


@dataclass(frozen=True)
class HostSpec:
    """What a host should import and which store it should open."""

    tree: Path
    store: HostStore = StoreKind.MEMORY
    database_url: str | None = None
    schema: str | None = None
    package: str = ""


class HostProcess(Protocol):
    """A running host, as the driver talks to it."""

    pid: int

    def send(self, message: dict[str, Any]) -> None: ...

    def receive(self, timeout: float) -> dict[str, Any]: ...

    def kill(self) -> None: ...

    def stderr_tail(self) -> str: ...

    def mark_output(self) -> None: ...

    def output_since_mark(self) -> str: ...


class Launcher(Protocol):
    """Something that starts hosts."""

    def launch(self, request: HostSpec) -> HostProcess: ...


def host_spec(
    tree: Path, package: str, store: StoreKind, database_url: str | None, schema: str | None
) -> HostSpec:
    """A tree's host spec; the schema defaults to $DB_SCHEMA on Postgres, else the package."""
    if store == StoreKind.POSTGRES and not schema:
        schema = os.environ.get("DB_SCHEMA") or None
    return HostSpec(tree, store, database_url, schema or package, package)
