"""Which isolation this machine gives a submission, and the refusal to grade without any.

    bwrap   bubblewrap found on PATH and able to make its namespaces here: the
            submission gets its own PID, mount and network namespaces and sees
            only its tree, the kit and Python, read-only. As root it also runs
            as a uid of its own (bwrap is started as that user).
    uid     root, without bwrap: a uid of its own and no network, the kit and
            other submissions out of its reach by file modes, a /tmp,
            /var/tmp and /dev/shm of each command's own; other processes
            stay in view in /proc.
    none    neither: grading refuses (NoIsolationError) unless the instructor
            said --unsafe-no-sandbox (allow_unsafe), and every report says so.

A grading run names its mode on its first line. With --require-bwrap (what
every CI recipe of the kit passes) it refuses to start in any mode but bwrap.

Memory and processes are capped by a cgroup where one can be had (root),
else by rlimits and the sandbox's watch (see box.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from labs.term.i18n import N_, _

from .cgroups import Cgroup
from .errors import NoIsolationError
from .limits import Caps, Isolation, Limits, SandboxMode
from .trampoline import covers, network_namespaces, trampoline
from .users import SLOTS, UID_BASE

UNSAFE_FLAG = "--unsafe-no-sandbox"
BWRAP_FLAG = "--require-bwrap"
BWRAP_HELP = N_("refuse to grade unless bubblewrap can isolate each submission (CI's default)")
INSTALL_BWRAP = "apt-get install bubblewrap"
_unsafe = False
_probed: dict[tuple[int, str], bool] = {}
_cgroups: bool | None = None


def allow_unsafe(allowed: bool = True) -> None:
    """Let sandboxes run without isolation on a machine that gives none (the instructor's call)."""
    global _unsafe
    _unsafe = allowed


def find_bwrap() -> str | None:
    """bwrap on the grader's PATH, if it is there and makes its namespaces as this user."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    key = (os.geteuid(), found)
    if key not in _probed:
        _probed[key] = probe(found)
    return found if _probed[key] else None


def probe(bwrap: str) -> bool:
    """Run bwrap once with every namespace the sandbox asks for (as a slot's uid when root)."""
    command = [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--",
        "/bin/true",
    ]
    if os.geteuid() == 0:
        spare = UID_BASE + SLOTS  # above the slots: a uid no sandbox ever runs as
        cover = covers() or []
        plan = {"cover": cover, "uid": spare, "gid": spare}
        command = trampoline(plan, command)
    try:
        done = subprocess.run(command, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def cgroups_available() -> bool:
    """Whether a cgroup per submission can be had here (tried once)."""
    global _cgroups
    if _cgroups is None:
        group = Cgroup.create(Limits())
        _cgroups = group is not None
        if group is not None:
            group.remove()
    return _cgroups


def machine_isolation(network: bool = False) -> Isolation:
    """What a sandbox gives on this machine (network=True: one that keeps the network)."""
    root = os.geteuid() == 0
    if root and covers() is None:
        # Root that cannot hand the interpreter to a slot's uid would run learners as root.
        return Isolation(SandboxMode.NONE, False, False, Caps.RLIMITS)
    caps = Caps.CGROUP if cgroups_available() else Caps.RLIMITS
    if find_bwrap() is not None:
        return Isolation(SandboxMode.BWRAP, root, not network, caps)
    if root:
        return Isolation(SandboxMode.UID, True, not network and network_namespaces(), caps)
    return Isolation(SandboxMode.NONE, False, False, Caps.RLIMITS)


def require_isolation(bwrap: bool = False) -> Isolation:
    """The machine's isolation; NoIsolationError when there is none and unsafe was not allowed,
    or when bwrap (--require-bwrap) asks for the bwrap mode and the machine gives another."""
    isolation = machine_isolation()
    if bwrap and isolation.mode != SandboxMode.BWRAP:
        raise NoIsolationError(
            _(
                "refusing to grade: {flag} was given and no working bwrap was found on PATH "
                "(this machine would grade in the {mode} mode); install it: {fix}"
            ).format(flag=BWRAP_FLAG, mode=isolation.mode, fix=INSTALL_BWRAP)
        )
    if isolation.mode == SandboxMode.NONE and not _unsafe:
        raise NoIsolationError(
            "refusing to grade: this machine gives the learner's code no sandbox (no bwrap "
            "that can make namespaces here, and not running as root). Install bubblewrap "
            f"(apt install bubblewrap), or grade as root, or pass {UNSAFE_FLAG} to grade "
            "anyway with the learner's code running as you"
        )
    return isolation
