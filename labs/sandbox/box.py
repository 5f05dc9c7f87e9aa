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
- its **output read through a capped buffer**: the first and last
  `Limits.output_bytes` are kept, the middle is counted and dropped.

`Sandbox.popen` starts a command through a small trampoline (`python -I -S`)
that applies the namespace, the limits and the user, then execs the command:
what runs is the command itself, never a fork of the grader.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import parse_qs, urlsplit

from labs.trees.finding import REPO_ROOT
from labs.untrusted import CappedOutput

MiB = 1024 * 1024
# Numbered users for the slots; no account needs to exist for a uid to own processes and files.
UID_BASE = int(os.environ.get("LAB_SANDBOX_UID_BASE", "1900000000"))
SLOTS = 256
SLOT_LOCKS = Path(tempfile.gettempdir()) / "lab-sandbox-slots"
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Limits:
    """What one sandboxed process may take."""

    cpu_seconds: int = 120
    address_space: int = 3072 * MiB
    file_size: int = 256 * MiB
    processes: int = 128  # per slot uid: the submission's processes together
    output_bytes: int = 32 * 1024  # kept from the head and from the tail of each stream


@dataclass(frozen=True)
class Isolation:
    """Which protections applied: they depend on the machine (root or not, namespaces)."""

    own_user: bool
    no_network: bool

    def describe(self) -> str:
        """One line for a report."""
        user = (
            "a user of its own (everything it starts is killed at the end)"
            if self.own_user
            else "the grader's user (process group only: a process that calls setsid can escape)"
        )
        network = "no network" if self.no_network else "network not isolated"
        return f"sandbox: {user}; {network}; rlimits; private temp dir; minimal environment"


# Runs as root in the child, after the session is made: namespace, limits, user, then exec.
TRAMPOLINE = """
import ctypes, json, os, resource, sys
plan = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
if plan["unshare_net"] and libc.unshare(0x40000000) != 0:
    sys.stderr.write("sandbox: could not make a network namespace\\n")
    os._exit(70)
if plan["cover"]:
    # A mount namespace of its own: a private home folder (/root) is covered by an empty
    # tmpfs, and only the interpreter's folder inside it is bound back, read-only.
    if libc.unshare(0x20000) != 0 or libc.mount(b"none", b"/", None, 0x44000, None) != 0:
        os._exit(71)
    for cover, keep in plan["cover"]:
        held = os.open(keep, os.O_PATH)
        if libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 6, b"mode=0755,size=64k") != 0:
            os._exit(72)
        os.mkdir(keep, 0o755)
        if libc.mount(f"/proc/self/fd/{held}".encode(), keep.encode(), None, 0x5000, None):
            os._exit(73)
        libc.mount(b"none", keep.encode(), None, 0x1021, None)
        os.close(held)
for name, value in plan["limits"].items():
    resource.setrlimit(getattr(resource, name), (value, value))
libc.prctl(38, 1, 0, 0, 0)
if plan["uid"] is not None:
    os.setgroups([])
    os.setgid(plan["gid"])
    os.setuid(plan["uid"])
os.umask(0o077)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _trampoline(plan: dict[str, object], argv: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-S", "-c", TRAMPOLINE, json.dumps(plan), *argv]


def covers() -> list[tuple[str, str]] | None:
    """(private folder to cover, the one folder in it to keep) so another user reaches Python.

    The interpreter may live in a folder only its owner may enter (a pyenv in
    /root): the sandbox covers such a folder with an empty one and binds back
    the single entry on the way to the interpreter. None when that is not enough.
    """
    found: dict[str, str] = {}
    needed = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.executable, REPO_ROOT)}
    for target in needed:
        chain = [*reversed(target.parents), target]
        for parent, child in itertools.pairwise(chain):
            if os.stat(parent).st_mode & 0o001:
                continue
            if any(str(parent).startswith(keep) for keep in found.values()):
                return None  # a second private folder inside the one kept: give up
            found[str(parent)] = str(child)
    return sorted(found.items())


_NETNS: bool | None = None


def network_namespaces() -> bool:
    """Whether this machine lets the grader give a child a network namespace (tried once)."""
    global _NETNS
    if _NETNS is None:
        if os.geteuid() != 0:
            _NETNS = False
        else:
            plan = {"unshare_net": True, "cover": [], "limits": {}, "uid": None, "gid": None}
            done = subprocess.run(
                _trampoline(plan, ["/bin/true"]), capture_output=True, timeout=30, check=False
            )
            _NETNS = done.returncode == 0
    return _NETNS


def machine_isolation() -> Isolation:
    """What a sandbox gives on this machine (without a database reached over TCP)."""
    own_user = os.geteuid() == 0 and covers() is not None
    return Isolation(own_user=own_user, no_network=network_namespaces())


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


class Slot:
    """A numbered uid held by this process through a file lock, until released."""

    def __init__(self) -> None:
        SLOT_LOCKS.mkdir(mode=0o700, exist_ok=True)
        for number in range(SLOTS):
            handle = (SLOT_LOCKS / f"{number}.lock").open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.handle, self.uid = handle, UID_BASE + number
            kill_user(self.uid)  # whatever a grader that crashed left behind
            return
        raise RuntimeError(f"all {SLOTS} sandbox slots are in use")

    def release(self) -> None:
        """Let another sandbox take the uid."""
        self.handle.close()


# Becomes the slot's user, then kill(-1): the kernel signals every process that user owns
# in one pass over the process table, so one forking while it runs is caught too.
KILLER = """
import os, signal, sys
uid = int(sys.argv[1])
os.setgroups([]); os.setgid(uid); os.setuid(uid)
os.kill(-1, signal.SIGKILL)
"""


def processes_of(uid: int) -> list[int]:
    """The live (not zombie) processes of uid (the owner of /proc/PID is the process's uid)."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            with open(f"/proc/{entry.name}/stat", encoding="utf-8", errors="replace") as stat:
                state = stat.read().rpartition(")")[2].split()[0]
            if state != "Z":
                found.append(int(entry.name))
    return found


def kill_user(uid: int) -> None:
    """SIGKILL every process of uid, sent as that uid; repeat until none is left running."""
    for _ in range(50):
        if not processes_of(uid):
            return
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", KILLER, str(uid)], capture_output=True, check=False
        )
        time.sleep(0.02)
    raise RuntimeError(f"processes of sandbox uid {uid} survived SIGKILL")


def links(folder: str, names: list[str]) -> list[str]:
    """The entries of folder that are symbolic links (for copytree's ignore)."""
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


class Sandbox:
    """One submission's sandbox: a slot, a private directory, and the processes started in it."""

    def __init__(self, limits: Limits | None = None, *, network: bool = False) -> None:
        self.limits = limits or Limits()
        self.want_network = network
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
            _trampoline(plan, argv),
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
        out, err = outputs.values()
        return Finished(returncode, out.text(), err.text())

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
