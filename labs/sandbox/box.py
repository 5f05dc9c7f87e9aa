"""A sandbox per submission: the learner's processes run apart, limited, and all die at the end.

Grading runs a learner's code, so each submission gets a `Sandbox`:

- its own **user**, when the grader runs as root: a numbered uid of its own
  (a *slot*, held with a file lock so parallel graders never share one). At the
  end every process of that uid is killed at once (`kill(-1)` sent as that
  uid, which the kernel applies to all of them, forks included), so a process
  that forked and called setsid dies too. Not root: the process group only,
  and a process that calls setsid escapes it (`Sandbox.isolation` says so);
- its own **session and process group**, killed whole at the timeout;
- **rlimits**: CPU seconds, address space, file size, processes (per uid, so
  only with a slot of its own), no core files; no new privileges (setuid
  programs do not raise it);
- its own **private directory** (mode 0700): HOME, TMPDIR and the cwd;
- an **environment** with nothing but what the run needs: no CI secrets,
  no other database URL or password;
- **no network** when the kernel allows a new network namespace (root):
  only a loopback that is down; Postgres is then reached over its Unix socket;
- its **output read through a capped buffer** (labs.untrusted.CappedOutput):
  `Limits.output_bytes` of each stream are kept, half from its start and half
  from its end; the middle is counted and dropped.

`Sandbox.popen` starts a command through a small trampoline (`python -I -S`,
trampoline.py) that applies the namespace, the limits and the user, then
execs the command: what runs is the command itself, never a fork of the
grader. The limits are in limits.py, the slots and their users in users.py.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import parse_qs, urlsplit

from labs.trees.finding import REPO_ROOT
from labs.untrusted import CappedOutput, clean_text

from .limits import Isolation, Limits
from .trampoline import covers, network_namespaces, trampoline
from .users import Slot, kill_user

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class Finished:
    """How a sandboxed command ended."""

    returncode: int | None  # None when it was killed at the timeout
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        """Whether it was killed at the timeout."""
        return self.returncode is None


def links(folder: str, names: list[str]) -> list[str]:
    """The entries of folder that are symbolic links (for copytree's ignore)."""
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


class Sandbox:
    """One submission's sandbox: a slot, a private directory, and the processes started in it."""

    def __init__(self, limits: Limits | None = None, *, network: bool = False) -> None:
        self.limits = limits or Limits()
        self.cover = covers() if os.geteuid() == 0 else None
        self.slot = Slot() if self.cover is not None else None
        self.uid = self.slot.uid if self.slot else None
        self.root = Path(tempfile.mkdtemp(prefix="lab-sandbox-"))
        self.home = self.root / "home"
        self.home.mkdir(mode=0o700)
        if self.uid is not None:
            # The grader owns the root; the slot's group may enter it and read what is shared.
            os.chown(self.root, 0, self.uid)
            os.chmod(self.root, 0o750)
            os.chown(self.home, self.uid, self.uid)
        self.isolation = Isolation(
            own_user=self.uid is not None, no_network=not network and network_namespaces()
        )
        self._pgids: list[int] = []

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def share(self, source: Path, name: str) -> Path:
        """Copy a folder in, links left out: readable by the sandbox's user alone, not writable."""
        copy = Path(shutil.copytree(source, self.root / name, symlinks=True, ignore=links))
        if self.uid is not None:
            for path in [copy, *copy.rglob("*")]:
                os.lchown(path, 0, self.uid)
                if not path.is_symlink():
                    os.chmod(path, 0o750 if path.is_dir() else 0o640)
        return copy

    def give(self, path: Path) -> Path:
        """Hand a path under the private directory to the sandbox's user (a cache it writes)."""
        if self.uid is not None:
            for entry in [path, *path.rglob("*")]:
                os.lchown(entry, self.uid, self.uid)
        return path

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """All a learner's process gets: a path, a home, a temp dir, the kit on PYTHONPATH."""
        return {
            "PATH": SAFE_PATH,
            "HOME": str(self.home),
            "TMPDIR": str(self.home),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": str(REPO_ROOT),
            "PYTHONUTF8": "1",
            **(extra or {}),
        }

    def popen(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        stdin: int | IO[bytes] | None = subprocess.DEVNULL,
        stdout: int | None = subprocess.PIPE,
        stderr: int | None = subprocess.PIPE,
        cwd: Path | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start argv in the sandbox: new session, namespace, limits, user; exec'd, not forked."""
        limits = {
            "RLIMIT_CPU": self.limits.cpu_seconds,
            "RLIMIT_AS": self.limits.address_space,
            "RLIMIT_FSIZE": self.limits.file_size,
            "RLIMIT_CORE": 0,
        }
        if self.uid is not None:  # RLIMIT_NPROC counts every process of the real uid
            limits["RLIMIT_NPROC"] = self.limits.processes
        plan = {
            "unshare_net": self.isolation.no_network,
            "cover": self.cover or [],
            "limits": limits,
            "uid": self.uid,
            "gid": self.uid,
        }
        process = subprocess.Popen(
            trampoline(plan, argv),
            cwd=cwd or self.home,
            env=self.environment(env),
            pass_fds=tuple(pass_fds),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        self._pgids.append(process.pid)
        return process

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> Finished:
        """Run argv to the end or the timeout; everything it started is killed either way."""
        process = self.popen(argv, env=env, cwd=cwd)
        assert process.stdout is not None and process.stderr is not None
        outputs = {
            process.stdout.fileno(): CappedOutput(self.limits.output_bytes),
            process.stderr.fileno(): CappedOutput(self.limits.output_bytes),
        }
        returncode: int | None = None
        killed = False
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            for stream in (process.stdout, process.stderr):
                selector.register(stream, selectors.EVENT_READ)
            while selector.get_map() and time.monotonic() < deadline:
                if process.poll() is not None and returncode is None:
                    returncode = process.returncode
                    self.kill()  # nothing outlives the command; the pipes then reach their end
                    killed = True
                    deadline = min(deadline, time.monotonic() + 1.0)
                for key, _ in selector.select(
                    timeout=max(0.0, min(0.2, deadline - time.monotonic()))
                ):
                    chunk = os.read(key.fd, 65536)
                    if chunk:
                        outputs[key.fd].feed(chunk)
                    else:
                        selector.unregister(key.fileobj)
        if returncode is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                returncode = process.wait(timeout=max(0.0, deadline - time.monotonic()))
        if not killed:
            self.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()
        out, err = (clean_text(output.text(), keep_newlines=True) for output in outputs.values())
        return Finished(returncode, out, err)

    def kill(self) -> None:
        """Kill every process started here: their groups, and every process of the slot's uid."""
        for pgid in self._pgids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
        if self.uid is not None:
            kill_user(self.uid)

    def close(self) -> None:
        """Kill what is left, remove the private directory, free the slot."""
        try:
            self.kill()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
            if self.slot:
                self.slot.release()


@contextlib.contextmanager
def sandbox(limits: Limits | None = None, *, network: bool = False) -> Iterator[Sandbox]:
    """A Sandbox for the length of a with-block."""
    box = Sandbox(limits, network=network)
    try:
        yield box
    finally:
        box.close()


def run_sandboxed(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    limits: Limits | None = None,
    network: bool = False,
) -> Finished:
    """Run one command in a sandbox of its own (a typecheck, a migration) and clean up."""
    with sandbox(limits, network=network) as box:
        return box.run(argv, timeout=timeout, env=env, cwd=cwd)


def url_needs_network(database_url: str) -> bool:
    """Whether a database URL is reached over TCP (a Unix socket needs no network)."""
    parts = urlsplit(database_url)
    socket_dir = parse_qs(parts.query).get("host", [""])[0]
    return not (socket_dir.startswith("/") or (parts.hostname or "").startswith("%2f"))
