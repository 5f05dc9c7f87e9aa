"""A user of its own per sandbox: numbered uids held as slots, and killing all a uid runs.

No account needs to exist for a uid to own processes and files. A slot is
held through a file lock, so parallel graders never share one; at the end
every process of the slot's uid is killed at once, forks included.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

from .errors import SandboxError
from .files import remove_tree

# Numbered users for the slots; no account needs to exist for a uid to own processes and files.
UID_BASE = int(os.environ.get("LAB_SANDBOX_UID_BASE", "1900000000"))
SLOTS = 256
SCRATCH_PLACES = ("/tmp", "/var/tmp", "/dev/shm")  # where any user may write on the machine
# One place for the whole machine, whatever TMPDIR says: the uids are the machine's, and two
# graders with two TMPDIRs must never hold the same one.
SLOT_LOCKS = Path("/tmp") / "lab-sandbox-slots"


class Slot:
    """A numbered uid held by this process through a file lock, until released."""

    def __init__(self) -> None:
        SLOT_LOCKS.mkdir(mode=0o700, exist_ok=True)
        held = SLOT_LOCKS.lstat()
        if held.st_uid != os.geteuid() or held.st_mode & 0o077 or SLOT_LOCKS.is_symlink():
            raise SandboxError(
                f"{SLOT_LOCKS} must be a folder of this user's alone (mode 0700): "
                "remove it and grade again"
            )
        for number in range(SLOTS):
            handle = (SLOT_LOCKS / f"{number}.lock").open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.handle, self.uid = handle, UID_BASE + number
            kill_user(self.uid)  # whatever a grader that crashed left behind
            remove_files_of(self.uid)
            return
        raise SandboxError(f"all {SLOTS} sandbox slots are in use")

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


def remove_files_of(uid: int, places: tuple[str, ...] = SCRATCH_PLACES) -> list[str]:
    """Remove what uid left in the machine's shared scratch folders; return what was removed.

    Each command of a sandbox has a /tmp, /var/tmp and /dev/shm of its own
    (bubblewrap's, or without it the trampoline's tmpfs), so a sandbox's user
    should leave nothing in the machine's; this sweep is the second line of
    defence: what the uid left there anyway (files, folders, a link) must not
    outlive its run, fill the disk or the memory for the submissions after
    it, or be read by the next one that gets its uid. Each entry at the top
    of those folders that uid owns goes, never followed through a link.
    """
    removed = []
    for place in places:
        with contextlib.suppress(OSError), os.scandir(place) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid == uid:
                        remove_tree(Path(entry.path))
                        removed.append(entry.path)
    return removed


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
    raise SandboxError(f"processes of sandbox uid {uid} survived SIGKILL")
