"""Writing the grader's outputs where a learner's code cannot redirect them.

The grader runs as root on a grading machine and as the runner's user in
Classroom; a learner's code that can plant a link where the grader will
write (a predictable results path in /tmp) would have the grader overwrite
any file it points at. So every output is written through a descriptor of
its folder (never a path followed again), to a new file of a random name
opened with O_EXCL | O_NOFOLLOW and mode 0600, then renamed over its name
(a rename replaces a planted link, never what it points at). The folder
itself must be a real folder, never a link; one that does not exist is made
with mode 0700. The grader's umask is 077 (GRADER_UMASK).
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from labs.checking.results_json import write_text

from .errors import OutputError

GRADER_UMASK = 0o077


def output_folder(path: Path) -> Path:
    """path as a folder the grader may write in: made 0700 if new, refused if it is a link."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        mode = os.lstat(path).st_mode
    except OSError as error:
        raise OutputError(f"cannot use {path} for the grades: {error.strerror}") from None
    if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
        raise OutputError(f"{path} is a link or not a folder: write the grades to a real folder")
    return path


def write_safely(path: Path, text: str) -> Path:
    """Write text as path (mode 0600) with the kit's one writer, its failure an OutputError."""
    try:
        write_text(text, path, mode=0o600)
    except OSError as error:
        raise OutputError(error.strerror or str(error)) from None
    return path


def private_results_folder(parent: Path) -> Path:
    """A new folder of an unpredictable name under parent, both 0700 and the grader's own.

    parent is made if missing; one that is a link, belongs to another user or
    lets others in is refused (another user could have prepared it).
    """
    os.makedirs(parent, mode=0o700, exist_ok=True)
    info = os.lstat(parent)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{parent} is a link or not a folder: refusing to keep results there")
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise OutputError(
            f"{parent} belongs to uid {info.st_uid} or others may enter it "
            f"(mode {info.st_mode & 0o777:o}): refusing to keep results there"
        )
    return Path(tempfile.mkdtemp(prefix="grades-", dir=parent))


def read_private(path: Path) -> str:
    """A results file the grader wrote: never through a link, and only if it is the grader's."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as error:
        raise OutputError(f"cannot read {path}: {error.strerror}") from None
    with os.fdopen(handle, encoding="utf-8") as source:
        info = os.fstat(source.fileno())
        if info.st_uid != os.geteuid() or not stat.S_ISREG(info.st_mode):
            raise OutputError(f"{path} is not a file the grader wrote: no verdict read")
        return source.read()
