"""A sandbox per submission: the learner's processes run apart, capped, and all die at the end.

Grading runs a learner's code, so each submission gets a `Sandbox`, the
same in every mode (modes.py says which the machine gives):

- **bwrap**: its own PID, mount, network (unless the run needs it), IPC and
  user namespaces, seeing only its tree, the kit and Python read-only, and
  its private folder (bwrap.py). As root it also runs as a numbered uid of
  its own (a *slot*, users.py). Killing bwrap's first process kills every
  process of the namespace, setsid daemons included.
- **uid** (root, no bwrap): a slot's uid, no network, the solution covered;
  each command gets a /tmp, /var/tmp and /dev/shm of its own (an empty tmpfs
  each, capped, counted against its memory cap, gone with its processes),
  where only what it needs is bound back (its sandbox folder, its database's
  socket folder, Python and the kit; `Sandbox.scratch`); at the end every
  process of the uid is killed at once, and whatever the uid still owns at
  the top of the machine's /tmp, /var/tmp and /dev/shm is removed.
- **none**: refused unless --unsafe-no-sandbox was given (modes.py).

Always: its own session; rlimits (CPU, file size, no core files, address
space per process, processes); no new privileges; a private directory (mode
0700) as HOME, TMPDIR and cwd; an environment with nothing but what the run
needs. Memory and processes are capped for the submission **as a whole**: a
cgroup where one can be had (cgroups.py), else the per-process rlimits and a
watch (watch.py) that adds up what the submission's processes hold. Either
way, when the submission passes a cap the whole of it is stopped and
`Sandbox.stopped` says why, for the report. Output is read through a capped
buffer (labs.untrusted.CappedOutput).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from labs.trees.finding import REPO_ROOT

from .bwrap import bwrap_command, hidden_names, python_folders
from .cgroups import Cgroup
from .files import remove_tree
from .limits import Caps, Isolation, Limits, SandboxMode
from .modes import find_bwrap, require_isolation
from .network import socket_file, socket_folder
from .process_watch import over_caps
from .reading import read_to_end
from .trampoline import covers, network_namespaces, private_scratch, scratch_places, trampoline
from .users import Slot, kill_user, remove_files_of

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
STOPPED = "the submission was stopped: "  # how a report says the sandbox stopped it


@dataclass
class Finished:
    """How a sandboxed command ended."""

    returncode: int | None  # None when it was killed at the timeout
    stdout: str
    stderr: str
    stopped: str = ""  # why the sandbox stopped the submission, if it did

    @property
    def timed_out(self) -> bool:
        """Whether it was killed at the timeout."""
        return self.returncode is None and not self.stopped


def links(folder: str, names: list[str]) -> list[str]:
    """The entries of folder that are symbolic links (for copytree's ignore)."""
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


class Sandbox:
    """One submission's sandbox: its mode, slot, cgroup, private folder and processes."""

    def __init__(
        self, limits: Limits | None = None, *, network: bool = False, expose: Sequence[Path] = ()
    ) -> None:
        self.limits = limits or Limits()
        mode = require_isolation().mode
        self.bwrap = find_bwrap() if mode == SandboxMode.BWRAP else None
        root = os.geteuid() == 0
        self.cover = covers() if root else None
        self.slot = Slot() if self.cover is not None and mode != SandboxMode.NONE else None
        self.uid = self.slot.uid if self.slot else None
        self.cgroup = Cgroup.create(self.limits) if root and mode != SandboxMode.NONE else None
        self.expose = list(expose)
        self.root = Path(tempfile.mkdtemp(prefix="lab-sandbox-"))
        self.home = self.root / "home"
        self.home.mkdir(mode=0o700)
        if self.uid is not None:
            # The grader owns the root; the slot's group may enter it and read what is shared.
            os.chown(self.root, 0, self.uid)
            os.chmod(self.root, 0o750)
            os.chown(self.home, self.uid, self.uid)
        no_network = not network and (
            mode == SandboxMode.BWRAP or (mode == SandboxMode.UID and network_namespaces())
        )
        caps = Caps.CGROUP if self.cgroup else Caps.RLIMITS
        self.isolation = Isolation(mode, self.uid is not None, no_network, caps)
        self.stopped = ""
        self._popens: list[subprocess.Popen[bytes]] = []
        self._closed = threading.Event()
        self._watch = threading.Thread(target=self._guard, name="sandbox-watch", daemon=True)
        self._watch.start()

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

    def rlimits(self) -> dict[str, int]:
        """The per-process limits: a lower address space where no cgroup caps the whole."""
        space = self.limits.address_space if self.cgroup else self.limits.fallback_address_space
        limits = {
            "RLIMIT_CPU": self.limits.cpu_seconds,
            "RLIMIT_AS": space,
            "RLIMIT_FSIZE": self.limits.file_size,
            "RLIMIT_CORE": 0,
        }
        if not self.cgroup and (self.uid is not None or self.bwrap):
            # Counts the uid's (or the namespace's) processes; a cgroup, where there is one,
            # caps them instead and says so when it refuses a fork.
            limits["RLIMIT_NPROC"] = self.limits.processes
        return limits

    def command(
        self, argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None
    ) -> list[str]:
        """The command line that starts argv in this sandbox, in the machine's mode.

        A database URL in env that names a Unix socket has the socket's folder
        shown to the command, read-only (a connection writes nothing there);
        without bwrap, where that folder is /tmp itself, the socket alone.
        """
        urls = [
            value
            for value in (env or {}).values()
            if value.startswith(("postgresql://", "postgres://"))
        ]
        sockets = [folder for url in urls for folder in socket_folder(url)]
        joined = self.cgroup.procs_files if self.cgroup else []
        user = {"uid": self.uid, "gid": self.uid}
        if self.bwrap:
            inside = trampoline({"limits": self.rlimits()}, argv)
            network = not self.isolation.no_network
            wrapped = bwrap_command(
                self.bwrap,
                inside,
                box=self.root,
                home=self.home,
                cwd=cwd,
                network=network,
                expose=[*self.expose, *sockets],
            )
            if os.geteuid() != 0:
                return wrapped
            return trampoline({"cgroup": joined, "cover": self.cover or [], **user}, wrapped)
        exposed = [Path(path) for path in self.expose]  # what the caller shows on purpose
        hidden = [
            str(REPO_ROOT / name)
            for name in hidden_names()
            if (REPO_ROOT / name).is_dir()
            and not any(path.is_relative_to(REPO_ROOT / name) for path in exposed)
        ]
        plan = {
            "cgroup": joined,
            "unshare_net": self.isolation.no_network,
            "cover": self.cover or [],
            **(self.scratch(cwd, urls) if self.uid is not None else {}),
            "hide": hidden if self.uid is not None else [],
            "limits": self.rlimits(),
            **user,
        }
        return trampoline(plan, argv)

    def scratch(self, cwd: Path, urls: Sequence[str]) -> dict[str, object]:
        """The trampoline's plan for a command's own /tmp, /var/tmp and /dev/shm (uid mode).

        bwrap gives each command an empty /tmp and /dev/shm; without it the
        trampoline covers the machine's three with a tmpfs of the command's own
        (private_scratch), then binds back what the command needs from under
        them: the sandbox's folder as it is (its modes say who writes), and
        read-only what the caller exposes, the socket folder of a database URL
        in env (the socket alone where that folder is a scratch folder itself,
        such as /tmp), Python, the kit and the working folder, which the
        trampoline enters again once all is mounted.
        """
        places = scratch_places()
        sockets = [
            path
            for url in urls
            for folder in socket_folder(url)
            for path in (socket_file(url) if os.path.realpath(folder) in places else [folder])
        ]
        shown: list[str | Path] = [*self.expose, *sockets, *python_folders(), REPO_ROOT, cwd]
        return {**private_scratch([self.root], shown), "cwd": str(cwd)}

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
        """Start argv in the sandbox: new session, namespaces, limits, user; exec'd, not forked."""
        where = cwd or self.home
        process = subprocess.Popen(
            self.command(argv, where, env),
            cwd="/" if self.bwrap else where,
            env=self.environment(env),
            pass_fds=tuple(pass_fds),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        self._popens.append(process)
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
        returncode, out, err = read_to_end(process, timeout, self.limits.output_bytes, self.kill)
        if not self.stopped and self.cgroup:  # stopped by a cap before the watch looked
            self.stopped = self.cgroup.tripped()
        return Finished(None if self.stopped else returncode, out, err, self.stopped)

    def _guard(self) -> None:
        """Stop the whole submission when it passes a cap (the watch behind `stopped`)."""
        every = 0.05 if self.cgroup else 0.1
        while not self._closed.wait(every):
            if self.cgroup:
                reason = self.cgroup.tripped()
            else:
                roots = [p.pid for p in self._popens if p.poll() is None]
                reason = over_caps(roots, self.uid, self.limits)
            if reason:
                self.stopped = reason
                self.kill()
                return

    def kill(self) -> None:
        """Kill every process started here: bwrap and its namespace, groups, cgroup, uid."""
        for process in self._popens:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                process.kill()  # bwrap: its namespace's first process dies with it, and all in it
        if self.cgroup:
            self.cgroup.kill()
        if self.uid is not None:
            kill_user(self.uid)

    def close(self) -> None:
        """Kill what is left, remove the private directory and the cgroup, free the slot."""
        self._closed.set()
        try:
            self.kill()
            for process in self._popens:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=5)
        finally:
            remove_tree(self.root)
            if self.cgroup:
                self.cgroup.remove()
            if self.uid is not None:  # what it left in the machine's /tmp, /var/tmp, /dev/shm
                remove_files_of(self.uid)
            if self.slot:
                self.slot.release()
