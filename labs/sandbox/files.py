"""Removing a folder a learner's code filled: no link followed, no recursion, never a crash.

shutil.rmtree recurses once per level, so a 1,200-deep folder raises
RecursionError, which `ignore_errors` does not catch. remove_tree walks with
one open folder at a time (a stack of names, not of descriptors), removes
each file and empty folder where it finds them, and never follows a link.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def empty_out(fd: int, stuck: set[tuple[int, int]]) -> str | None:
    """Remove the files and empty folders in the folder fd; return a folder still holding some.

    Folders in stuck (ones that would not empty) are passed over.
    """
    full = None
    with os.scandir(fd) as entries:
        found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_dir in found:
        try:
            if is_dir:
                os.rmdir(name, dir_fd=fd)
            else:
                os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            continue
        except OSError:
            if is_dir and full is None:
                child = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if (child.st_dev, child.st_ino) not in stuck:
                    full = name
    return full


def remove_tree(path: Path) -> None:
    """Remove path and all it holds, as far as this user can; errors are swallowed, never raised."""
    try:
        fd = os.open(path, FLAGS)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)  # a file or a link: removed itself, never what it points at
        return
    trail: list[str] = []  # the names from path down to the folder fd is open on
    stuck: set[tuple[int, int]] = set()  # folders that would not empty (no permission)
    try:
        while True:
            try:
                full = empty_out(fd, stuck)
            except OSError:
                full = None
            if full is not None:
                try:
                    below = os.open(full, FLAGS, dir_fd=fd)
                except OSError:
                    child = os.stat(full, dir_fd=fd, follow_symlinks=False)
                    stuck.add((child.st_dev, child.st_ino))
                    continue
                os.close(fd)
                fd, trail = below, [*trail, full]
                continue
            if not trail:
                break
            parent = os.open("..", FLAGS, dir_fd=fd)
            os.close(fd)
            fd, name = parent, trail.pop()
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError:
                with contextlib.suppress(OSError):
                    child = os.stat(name, dir_fd=fd, follow_symlinks=False)
                    stuck.add((child.st_dev, child.st_ino))
    except OSError:
        pass
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)
