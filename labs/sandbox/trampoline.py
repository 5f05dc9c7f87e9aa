"""The trampoline: a tiny `python -I -S` that applies cgroup, namespaces, limits, user; then execs.

What runs in a sandbox is the command itself, never a fork of the grader:
the trampoline starts in the new session, joins the submission's cgroup,
unshares the network, makes a mount namespace where one is needed (to cover
a private home folder holding the interpreter, or to hide the solution from a
sandbox without bwrap), sets the rlimits, drops to the slot's user and
execs. Under bwrap it runs twice: as root (cgroup, user) before bwrap, and
inside it (rlimits, which then count the sandbox's processes alone). This
module also finds out what this machine allows (root or not, network namespaces).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from labs.trees.finding import REPO_ROOT

# Runs as root in the child, after the session is made: namespace, limits, user, then exec.
TRAMPOLINE = """
import ctypes, json, os, resource, sys
plan = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
for procs in plan.get("cgroup", []):
    with open(procs, "w") as joined:
        joined.write(str(os.getpid()))
if plan.get("unshare_net") and libc.unshare(0x40000000) != 0:
    sys.stderr.write("sandbox: could not make a network namespace\\n")
    os._exit(70)
if plan.get("cover") or plan.get("hide"):
    # A mount namespace of its own: a private home folder (/root) is covered by an empty
    # tmpfs, and only the interpreter's folder inside it is bound back, read-only;
    # what must stay hidden (the solution) is covered by an empty, read-only tmpfs.
    if libc.unshare(0x20000) != 0 or libc.mount(b"none", b"/", None, 0x44000, None) != 0:
        os._exit(71)
    for cover, keep in plan.get("cover", []):
        held = os.open(keep, os.O_PATH)
        if libc.mount(b"tmpfs", cover.encode(), b"tmpfs", 6, b"mode=0755,size=64k") != 0:
            os._exit(72)
        os.mkdir(keep, 0o755)
        if libc.mount(f"/proc/self/fd/{held}".encode(), keep.encode(), None, 0x5000, None):
            os._exit(73)
        libc.mount(b"none", keep.encode(), None, 0x1021, None)
        os.close(held)
    for hidden in plan.get("hide", []):
        if libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", 7, b"mode=0555,size=4k") != 0:
            os._exit(74)
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
