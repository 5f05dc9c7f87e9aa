"""What the lab remembers for a learner between commands: hints shown, review marks, resets.

Kept per checkout: each clone of the lab has its own folder under the user's
state folder, named after the clone's resolved path:

    $LAB_STATE_DIR, else $XDG_STATE_HOME/mini-koda-lab, else ~/.local/state/mini-koda-lab
        checkouts/<folder name>-<hash of its path>/progress.json   hints, answers, ticks
        checkouts/<folder name>-<hash of its path>/backups/        what `labs reset` replaced

So one clone's answers never show in another's, and nothing is written
inside the checkout: a tree is what gets graded and diffed, and `git status`
stays clean. Moving a clone starts it afresh (its old folder stays, unread).
Older versions of the lab kept one progress.json for every clone directly in
the user's state folder; it is neither read nor moved (see legacy_notice).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from labs.trees.finding import REPO_ROOT

STATE_FILE = "progress.json"
LOCK_FILE = ".progress.lock"
# One writer at a time: threads of one process (the dashboard) by this lock,
# processes (the dashboard and a terminal) by an advisory lock on LOCK_FILE.
_writing = threading.Lock()


def state_home() -> Path:
    """The user's folder of lab state, holding one folder per checkout."""
    explicit = os.environ.get("LAB_STATE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mini-koda-lab"


def checkout_root() -> Path:
    """The checkout in use: the folder holding this lab kit and its starter."""
    return REPO_ROOT.resolve()


def state_dir() -> Path:
    """This checkout's own state folder: its progress file and its reset backups."""
    root = checkout_root()
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return state_home() / "checkouts" / f"{root.name}-{digest}"


def state_file() -> Path:
    """This checkout's progress file."""
    return state_dir() / STATE_FILE


def legacy_notice() -> str | None:
    """A word about the shared progress file older versions wrote, while this checkout has none.

    It is neither read nor moved: its hints and answers may belong to another
    clone. The learner decides what to do with it.
    """
    from .texts import message  # the texts load only when there is this to say

    old = state_home() / STATE_FILE
    if not old.is_file() or state_file().exists():
        return None
    return message("state", "legacy", old=old, new=state_file())


def tree_key(root: Path) -> str:
    """The key a tree's entries are kept under: its resolved path."""
    return str(root.resolve())


def load_state() -> dict[str, Any]:
    """The saved state; an unreadable or damaged file counts as empty (it only holds progress)."""
    try:
        data = json.loads(state_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(data: dict[str, Any]) -> Path:
    """Write the state atomically (a crash leaves the old file or the new, never half)."""
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data["checkout"] = str(checkout_root())  # whose folder this is, for a person looking
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
