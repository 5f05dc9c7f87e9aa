"""The trampoline: a tiny `python -I -S` that applies cgroup, namespaces, limits, user; then execs.

What runs in a sandbox is the command itself, never a fork of the grader:
the trampoline starts in the new session, joins the submission's cgroup,
unshares the network, makes a mount namespace where one is needed, sets the
rlimits, drops to the slot's user and execs. The mount namespace covers, in
this order: a private home folder holding the interpreter (all but the
interpreter's folder); in a sandbox without bwrap, the machine's /tmp,
/var/tmp and /dev/shm, each by an empty tmpfs of the command's own, capped
(TMP_SIZE, SHM_SIZE) and counted against its cgroup's memory, with what the
command needs from under them bound back (`private_scratch`); and, again
without bwrap, the solution. Under bwrap it runs twice: as root (cgroup,
user, the private home folder) before bwrap, and inside it (rlimits, which
then count the sandbox's processes alone). This module also finds out what
this machine allows (root or not, network namespaces).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from labs.trees.finding import REPO_ROOT

from .limits import SHM_SIZE, TMP_SIZE
from .users import SCRATCH_PLACES

SCRATCH_SIZES = {"/tmp": TMP_SIZE, "/var/tmp": TMP_SIZE, "/dev/shm": SHM_SIZE}

# Runs as root in the child, after the session is made: namespace, limits, user, then exec.
TRAMPOLINE = """
import ctypes, json, os, resource, stat, sys
plan = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)


def bind_back(held, path, read_only):
    # Mounts what the descriptor `held` was opened on (O_PATH, before anything covered it) at
    # path, which must exist already: the same files, seen again through what covers them.
    # Read-only adds ro to that mount and keeps the nosuid, nodev and noexec it had.
    if libc.mount(f"/proc/self/fd/{held}".encode(), path.encode(), None, 0x5000, None) != 0:
        return False
    flags = 0x1021 | (os.statvfs(path).f_flag & 0xE)
    return not read_only or libc.mount(b"none", path.encode(), None, flags, None) == 0


for procs in plan.get("cgroup", []):
    with open(procs, "w") as joined:
        joined.write(str(os.getpid()))
if plan.get("unshare_net") and libc.unshare(0x40000000) != 0:
    sys.stderr.write("sandbox: could not make a network namespace\\n")
    os._exit(70)
if plan.get("cover") or plan.get("scratch") or plan.get("hide"):
    # A mount namespace of its own, whose mounts the machine never sees (/ made private).
    if libc.unshare(0x20000) != 0 or libc.mount(b"none", b"/", None, 0x44000, None) != 0:
        os._exit(71)
    os.umask(0o022)  # the folders made below must be enterable by the sandbox's user
    # First, a private home folder (/root) is covered by an empty tmpfs, and only the
    # interpreter's folder inside it is bound back, read-only.
    for cover, keep in plan.get("cover", []):
        held = os.open(keep, os.O_PATH)
        if libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 6, b"mode=0755,size=64k") != 0:
            os._exit(72)
        os.mkdir(keep, 0o755)
        if not bind_back(held, keep, True):
            os._exit(73)
        os.close(held)
    # Then the machine's scratch folders (/tmp, /var/tmp, /dev/shm) are each covered by an
    # empty tmpfs of this command's own: any user may write there (mode 1777, sticky), up to
    # its size, never a device or a setuid program; its pages count against the memory of
    # the cgroup joined above, and it is gone when the last process of this namespace dies.
    # What the command needs from under them (its sandbox folder, its database's socket,
    # Python or the kit) is opened first, while it can still be reached; then it is made
    # again on the new tmpfs (its parent folders 0755, itself an empty folder or file) and
    # bound back, read-only where the plan says so (all but the sandbox's folder).
    kept = [(path, os.open(path, os.O_PATH), ro) for path, ro in plan.get("keep", [])]
    for place, size in plan.get("scratch", []):
        options = f"mode=1777,size={size}".encode()
        if libc.mount(b"tmpfs", place.encode(), b"tmpfs", 6, options) != 0:
            os._exit(75)
    for path, held, read_only in kept:
        os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
        if stat.S_ISDIR(os.fstat(held).st_mode):
            os.mkdir(path, 0o755)
        else:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        if not bind_back(held, path, read_only):
            os._exit(76)
        os.close(held)
    # Last, what must stay hidden (the solution, wherever the kit bound back above holds it)
    # is covered by an empty, read-only tmpfs.
    for hidden in plan.get("hide", []):
        if libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", 7, b"mode=0555,size=4k") != 0:
            os._exit(74)
if plan.get("cwd"):
    os.chdir(plan["cwd"])  # the working folder again, as the new mounts show it
for name, value in plan.get("limits", {}).items():
    resource.setrlimit(getattr(resource, name), (value, value))
if plan.get("no_new_privs", True):
    libc.prctl(38, 1, 0, 0, 0)
if plan.get("uid") is not None:
    os.setgroups([])
    os.setgid(plan["gid"])
    os.setuid(plan["uid"])
os.umask(plan.get("umask", 0o077))
os.execv(sys.argv[2], sys.argv[2:])
"""


def trampoline(plan: Mapping[str, object], argv: Sequence[str]) -> list[str]:
    """The command line that applies plan, then execs argv."""
    return [sys.executable, "-I", "-S", "-c", TRAMPOLINE, json.dumps(plan), *argv]


def covers() -> list[tuple[str, str]] | None:
    """(private folder to cover, the one folder in it to keep) so another user reaches Python.

    The interpreter may live in a folder only its owner may enter (a pyenv in
    /root), and the kit in another (a private temporary folder): the sandbox
    covers each such folder with an empty one and binds back the single entry
    on the way, outermost first, so folders private inside private ones are
    passed too. None when one private folder is on two ways (it has one keep).
    """
    found: dict[str, str] = {}
    needed = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.executable, REPO_ROOT)}
    for target in needed:
        chain = [*reversed(target.parents), target]
        for parent, child in itertools.pairwise(chain):
            if os.stat(parent).st_mode & 0o001:
                continue
            if found.setdefault(str(parent), str(child)) != str(child):
                return None
    return sorted(found.items(), key=lambda pair: pair[0].count("/"))


def scratch_places() -> dict[str, int]:
    """The machine's scratch folders (users.SCRATCH_PLACES) that exist: real path -> tmpfs size.

    By real path, so a /var/tmp that is a link to /tmp is covered once.
    """
    found: dict[str, int] = {}
    for place in SCRATCH_PLACES:
        if os.path.isdir(place):
            found.setdefault(os.path.realpath(place), SCRATCH_SIZES[place])
    return found


def private_scratch(
    writable: Iterable[str | Path], shown: Iterable[str | Path]
) -> dict[str, list[list[object]]]:
    """The trampoline's "scratch" (folders to cover, with sizes) and "keep" (paths bound back).

    Every scratch folder is covered by a tmpfs of the command's own. What
    lies under one and must stay reachable is kept: the paths in writable as
    they are (their modes say who may write), those in shown read-only; each
    both as given and with its links resolved (a virtualenv reached through
    a link), and only the outermost of them (a keep holds what lies inside
    it; it stays writable if any of those is). A path that is a scratch
    folder itself was shown on purpose: that folder is left uncovered (as
    bubblewrap, told to show /tmp, binds the machine's over its own).
    """
    wanted: dict[str, bool] = {}  # path -> writable
    for paths, can_write in ((writable, True), (shown, False)):
        for path in paths:
            for form in {os.path.abspath(path), os.path.realpath(path)}:
                wanted[form] = wanted.get(form, False) or can_write
    places = {place: size for place, size in scratch_places().items() if place not in wanted}
    keep: dict[str, bool] = {}
    for path in sorted(wanted):  # a folder sorts before what it holds
        if not any(Path(path).is_relative_to(place) for place in places):
            continue
        if not os.path.lexists(path):
            continue
        outer = next((kept for kept in keep if Path(path).is_relative_to(kept)), path)
        keep[outer] = keep.get(outer, False) or wanted[path]
    return {
        "scratch": [[place, size] for place, size in places.items()],
        "keep": [[path, not can_write] for path, can_write in keep.items()],
    }


_NETNS: bool | None = None


def network_namespaces() -> bool:
    """Whether this machine lets the grader give a child a network namespace (tried once)."""
    global _NETNS
    if _NETNS is None:
        if os.geteuid() != 0:
            _NETNS = False
        else:
            plan = {"unshare_net": True}
            done = subprocess.run(
                trampoline(plan, ["/bin/true"]), capture_output=True, timeout=30, check=False
            )
            _NETNS = done.returncode == 0
    return _NETNS
