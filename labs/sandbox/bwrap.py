"""The bubblewrap command line: what a submission sees, and the namespaces it gets.

Inside, the submission sees the system's /usr (and the links or folders
/bin, /lib... point into), a few files of /etc, a /proc of its own PID
namespace (only its own processes), a minimal /dev, an empty /tmp, the
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

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from labs.trees.finding import REPO_ROOT

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
# What must not be seen even where the installation holds it (a non-editable install).
HIDDEN = ("solution", "migrations/versions/solution")
TMP_SIZE = 64 * 1024 * 1024


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


def kit_view(visible: Iterable[str]) -> list[str]:
    """The kit, read-only, and an empty read-only folder over the solution wherever it shows."""
    args: list[str] = []
    for name in KIT:
        args += ["--ro-bind-try", str(REPO_ROOT / name), str(REPO_ROOT / name)]
    shown = [*visible, *(str(REPO_ROOT / name) for name in KIT)]
    for name in HIDDEN:
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
