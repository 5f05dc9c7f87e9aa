"""What the lab remembers for a learner between commands: hints shown, review marks.

One small JSON file in the user's state folder ($LAB_STATE_DIR, else
$XDG_STATE_HOME/mini-koda-lab, else ~/.local/state/mini-koda-lab). Nothing is
written inside a tree: a tree is what gets graded and diffed.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATE_FILE = "progress.json"
LOCK_FILE = ".progress.lock"
# One writer at a time: threads of one process (the dashboard) by this lock,
# processes (the dashboard and a terminal) by an advisory lock on LOCK_FILE.
_writing = threading.Lock()


def state_dir() -> Path:
    """The folder holding the lab's local state and the reset backups."""
    explicit = os.environ.get("LAB_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mini-koda-lab"


def tree_key(root: Path) -> str:
    """The key a tree's entries are kept under: its resolved path."""
    return str(root.resolve())


def load_state() -> dict[str, Any]:
    """The saved state; an unreadable or damaged file counts as empty (it only holds progress)."""
    try:
        data = json.loads((state_dir() / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(data: dict[str, Any]) -> Path:
    """Write the state atomically (a crash leaves the old file or the new, never half)."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / STATE_FILE
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=folder, prefix=".progress-", suffix=".json", delete=False
    ) as file:
        json.dump(data, file, indent=2, sort_keys=True)
        file.write("\n")
    Path(file.name).replace(target)
    return target


@contextlib.contextmanager
def editing() -> Iterator[dict[str, Any]]:
    """Load the state, let the caller change it, and save it, with no other writer between."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with _writing, (folder / LOCK_FILE).open("a") as lock:
        try:
            import fcntl
        except ImportError:  # Windows: the thread lock alone
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        data = load_state()
        yield data
        save_state(data)


def section(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The nested dict at data[k1][k2]..., created empty where missing or not a dict."""
    here = data
    for key in keys:
        child = here.get(key)
        if not isinstance(child, dict):
            child = here[key] = {}
        here = child
    return here
