"""The bubblewrap command line: what a submission sees, and the namespaces it gets.

Inside, the submission sees the system's /usr (and the links or folders
/bin, /lib... point into), a few files of /etc, a /proc of its own PID
namespace (only its own processes), a minimal /dev (read-only, but for a
/dev/shm of SHM_SIZE), an empty /tmp of TMP_SIZE, the
Python installation and the lab kit (labs/, which holds the Alembic
environment a migration runs in, and the shipped starter it reads), all
read-only, and its sandbox folder, where only the private home is writable. The solution,
wherever the installation holds it, is covered by an empty folder. Nothing
else of the machine exists there: no repository root, no other hand-in, no
out folder, no grader's home.

User, PID, IPC, UTS and cgroup namespaces always; the network's unless the
run needs it (a database reached over TCP); no nested user namespaces.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from labs.trees.finding import REPO_ROOT

from .limits import SHM_SIZE, TMP_SIZE

SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "hosts",
    "nsswitch.conf",
    "resolv.conf",
    "passwd",
    "group",
    "localtime",
    "ld.so.cache",
    "ssl",
    "ca-certificates",
    "alternatives",
)
# The kit, relative to its root: the package (the Alembic environment a migration runs in is
# labs/pg/environment), and the shipped starter whose models it imports: learners have those too.
KIT = ("labs", "starter")
# What must not be seen even where the installation holds it (a non-editable install, or a
# checkout inside the interpreter's virtualenv): the instructors' history, the project's tests,
# and every lab tree but the starter, with its migrations (hidden_names adds other trees).
HIDDEN = (".git", "tests", "solution", "migrations/versions/solution")
CHECKOUT_ONLY = (".git", "tests")  # in site-packages, a "tests" folder may be a library's
TREE_PARTS = ("shared", "gateway", "worker")  # what makes a folder a lab tree


def python_folders() -> list[str]:
    """The folders the interpreter and its libraries live in (outside /usr), without repeats."""
    found: list[str] = []
    bin_folder = os.path.dirname(sys.executable)
    venv = os.path.dirname(bin_folder)  # the virtualenv of the interpreter, even under -S
    executable = [bin_folder, os.path.dirname(os.path.realpath(sys.executable))]
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        executable.append(venv)
    for path in (sys.base_prefix, sys.prefix, *executable):
        for candidate in {path, os.path.realpath(path)}:
            if candidate.startswith("/usr/") or any(
                candidate == f or candidate.startswith(f + "/") for f in found
            ):
                continue
            found = [f for f in found if not f.startswith(candidate + "/")] + [candidate]
    return sorted(found)


def system_view() -> list[str]:
    """/usr, the top-level links into it (or the folders themselves), and /etc's few files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for path in SYSTEM_LINKS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def hidden_names(root: Path = REPO_ROOT) -> list[str]:
    """What of the kit's checkout no submission may see, as paths from its root: HIDDEN, and
    every other lab tree beside the starter (a folder with the trees' packages) with its
    migrations.

    Only where root is a checkout: an installed kit's root is site-packages,
    whose folders are the libraries the submission runs on.
    """
    if root.name in ("site-packages", "dist-packages"):
        return [name for name in HIDDEN if name not in CHECKOUT_ONLY]
    names = list(HIDDEN)
    with contextlib.suppress(OSError):
        for entry in sorted(root.iterdir()):
            tree = all((entry / part).is_dir() for part in TREE_PARTS)
            if tree and entry.name not in KIT and entry.name not in names:
                names += [entry.name, f"migrations/versions/{entry.name}"]
    return names


def kit_view(visible: Iterable[str]) -> list[str]:
    """The kit, read-only, and an empty read-only folder over what must stay hidden wherever
    it shows (hidden_names)."""
    args: list[str] = []
    for name in KIT:
        args += ["--ro-bind-try", str(REPO_ROOT / name), str(REPO_ROOT / name)]
    shown = [*visible, *(str(REPO_ROOT / name) for name in KIT)]
    for name in hidden_names():
        hidden = REPO_ROOT / name
        if hidden.is_dir() and any(str(hidden).startswith(f + "/") for f in shown):
            args += ["--tmpfs", str(hidden), "--remount-ro", str(hidden)]
    return args


def bwrap_command(
    bwrap: str,
    argv: Sequence[str],
    *,
    box: Path,
    home: Path,
    cwd: Path,
    network: bool,
    expose: Sequence[Path] = (),
) -> list[str]:
    """bwrap's arguments for one command of a sandbox whose folder is box (home writable)."""
    python = python_folders()
    args = [
        bwrap,
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        *([] if network else ["--unshare-net"]),
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        *system_view(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # bubblewrap's /dev is a tmpfs the size of half the machine's memory, writable by an
        # unprivileged grader's sandbox: a small /dev/shm of its own, then /dev read-only.
        "--size",
        str(SHM_SIZE),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
        "/dev",
        "--size",
        str(TMP_SIZE),
        "--tmpfs",
        "/tmp",
    ]
    for folder in python:
        args += ["--ro-bind", folder, folder]
    args += kit_view(python)
    for path in expose:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--ro-bind", str(box), str(box), "--bind", str(home), str(home)]
    return [*args, "--chdir", str(cwd), "--", *argv]
