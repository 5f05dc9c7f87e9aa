"""Stop a throwaway cluster and remove its folder once the process that made it has ended.

A TempCluster made with reaped=True starts this file in a session of its own:

    python -I labs/pg/reaper.py PID ROOT BINDIR [RUNUSER]

It waits for process PID to end, however it ends (SIGKILL included, which
no atexit handler survives), then stops the server in ROOT/data with
BINDIR's pg_ctl (as the postgres user through RUNUSER, util-linux's
runuser, when it is given) and removes ROOT. When the cluster was destroyed
in the ordinary way, ROOT is gone and there is nothing to do; the cluster's
owner ends the reaper then.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path


def wait_for_end(pid: int) -> None:
    """Return once process pid has ended (a pidfd where the kernel has one, else polling)."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (old kernel), or already gone
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            time.sleep(0.5)
    else:
        select.select([handle], [], [])
        os.close(handle)


def reap(root: Path, bindir: Path, runuser: str | None) -> None:
    """Stop the cluster in root (immediately: no client is left to wait for) and remove root."""
    data = root / "data"
    if (data / "postmaster.pid").exists():
        command = [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
        if runuser:
            command = [runuser, "-u", "postgres", "--", *command]
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(command, capture_output=True, timeout=60, check=False)
    shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    """Wait for the process, then reap its cluster."""
    pid, root, bindir = int(argv[0]), Path(argv[1]), Path(argv[2])
    runuser = argv[3] if len(argv) > 3 else None
    wait_for_end(pid)
    reap(root, bindir, runuser)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
