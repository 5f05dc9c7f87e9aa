"""Taking a submission in: a folder or a zip copied to scratch space, never trusted on the way.

A hand-in is the learner's: a folder may hold symbolic links (to /dev/zero,
to another learner's folder, to the instructor's key) and a zip may be a bomb
(a few megabytes that unpack to gigabytes), hold `../` paths or links, and
either may hold a folder 1,200 deep or 60,000 empty folders. So a folder is
walked without following links (and without recursion) and only its regular
files are copied; a zip's directory is checked (entry count, total size,
folder count and depth, paths, links) before anything is written, and each
entry is copied with a byte count that stops at the declared size. Links are
never read: each one is named in a note. Past any cap the hand-in is refused
with a note saying which.
"""

from __future__ import annotations

import os
import shutil
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from labs.sandbox.limits import MiB

from ..untrusted import clean_text
from .errors import BrokenSubmissionError

MAX_FILES = 2000  # a tree is ~40 files; a class's worth of caches still fits
MAX_BYTES = 64 * MiB  # unpacked; a tree with its migrations is well under 1 MB
MAX_DIRS = 500  # a tree has about ten folders
MAX_DEPTH = 24  # folders below the hand-in's top; a tree is four deep
SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".venv"})
SHOWN = 5


@dataclass
class Intake:
    """Where a submission was copied, and what was left out on the way."""

    root: Path
    links: list[str] = field(default_factory=list)  # "path -> target", not followed
    others: list[str] = field(default_factory=list)  # devices, pipes, sockets

    def notes(self) -> list[str]:
        """What an instructor should know about the hand-in itself."""
        found = []
        for kind, items in (("links", self.links), ("special files", self.others)):
            if items:
                shown = ", ".join(items[:SHOWN]) + (
                    f" and {len(items) - SHOWN} more" if len(items) > SHOWN else ""
                )
                found.append(clean_text(f"{kind} in the hand-in were not followed: {shown}"))
        return found


def take_in(source: Path, into: Path) -> Intake:
    """Copy a submission folder, or unpack a zip, into into/submission."""
    destination = into / "submission"
    if source.is_symlink():
        raise BrokenSubmissionError(f"{source.name} is a link; hand in the folder or zip itself")
    if source.is_dir():
        return copy_folder(source, destination)
    if not source.exists():
        raise BrokenSubmissionError(f"{source} does not exist")
    return unpack_zip(source, destination)


def walk(source: Path, *, capped: bool = True) -> Iterator[tuple[Path, list[str], list[str]]]:
    """(folder, subfolders, files) from source down, links never followed, without recursion.

    The caller may prune subfolders, as with os.walk. Capped, a tree deeper
    than MAX_DEPTH or with more than MAX_DIRS folders is refused as it is met.
    """
    stack, seen = [(source, 0)], 0
    while stack:
        here, depth = stack.pop()
        seen += 1
        if capped:
            check_folders(seen, depth)
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    (dirs if is_dir else files).append(entry.name)
        except OSError:
            continue
        dirs.sort()
        files.sort()
        yield here, dirs, files
        stack.extend((here / name, depth + 1) for name in reversed(dirs))


def check_folders(count: int, depth: int) -> None:
    """Refuse a hand-in with more folders, or folders nested deeper, than any tree needs."""
    if depth > MAX_DEPTH:
        raise BrokenSubmissionError(
            f"could not grade: folders nested more than {MAX_DEPTH} deep in the hand-in "
            "(a lab tree is four deep)"
        )
    if count > MAX_DIRS:
        raise BrokenSubmissionError(
            f"could not grade: more than {MAX_DIRS} folders in the hand-in "
            "(a lab tree has about ten)"
        )


def copy_folder(source: Path, destination: Path) -> Intake:
    """Copy regular files only, never following a link; name the links and special files."""
    intake, count, total = Intake(destination), 0, 0
    for here, dirs, files in walk(source):
        relative = here.relative_to(source)
        (destination / relative).mkdir(parents=True, exist_ok=True)
        for name in [*dirs]:
            if name in SKIPPED_DIRS:
                dirs.remove(name)
        for name in files:
            path = here / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                intake.links.append(link_text(path, relative / name))
            elif not stat.S_ISREG(mode):
                intake.others.append((relative / name).as_posix())
            elif not name.endswith((".pyc", ".pyo")):
                count, total = count + 1, total + os.lstat(path).st_size
                check_size(count, total)
                copy_regular(path, destination / relative / name)
    return intake


def link_text(path: Path, relative: Path) -> str:
    """A link as `relative -> target`, read with readlink (the target is never opened)."""
    return f"{relative.as_posix()} -> {os.readlink(path)}"


def copy_regular(path: Path, target: Path) -> None:
    """Copy one regular file, refusing to open anything else (it could have been swapped)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    handle = os.open(path, flags)
    with os.fdopen(handle, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            return
        with target.open("wb") as writer:
            shutil.copyfileobj(reader, writer)


def check_size(count: int, total: int) -> None:
    """Refuse a hand-in with more files or bytes than any tree needs."""
    if count > MAX_FILES:
        raise BrokenSubmissionError(f"could not grade: more than {MAX_FILES} files in the hand-in")
    if total > MAX_BYTES:
        raise BrokenSubmissionError(
            f"could not grade: more than {MAX_BYTES // MiB} MB in the hand-in "
            "(a lab tree is well under 1 MB)"
        )


def unpack_zip(source: Path, destination: Path) -> Intake:
    """Check a zip's directory, then extract its regular files with a running byte count."""
    intake = Intake(destination)
    try:
        with zipfile.ZipFile(source) as archive:
            members = archive.infolist()
            check_size(len(members), sum(m.file_size for m in members))
            paths = [PurePosixPath(m.filename.replace("\\", "/")) for m in members]
            folders = {parent for path in paths for parent in path.parents}
            folders |= {path for path, m in zip(paths, members, strict=True) if m.is_dir()}
            check_folders(len(folders), max((len(f.parts) for f in folders), default=0))
            for member in members:
                relative = safe_name(member.filename)
                kind = stat.S_IFMT(member.external_attr >> 16)
                if kind == stat.S_IFLNK:
                    target = archive.read(member)[:200].decode("utf-8", "replace")
                    intake.links.append(f"{relative} -> {target}")
                elif member.is_dir():
                    (destination / relative).mkdir(parents=True, exist_ok=True)
                elif kind not in (0, stat.S_IFREG):
                    intake.others.append(relative)
                elif not relative.endswith((".pyc", ".pyo")):
                    extract(archive, member, destination / relative)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as error:
        raise BrokenSubmissionError(f"the zip does not unpack: {clean_text(str(error))}") from None
    return intake


def safe_name(name: str) -> str:
    """A zip entry's path, refused when it is absolute or climbs out with '..'."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or ":" in name or not path.parts:
        raise BrokenSubmissionError(
            f"could not grade: the zip holds a path outside its folder: {clean_text(name)[:80]}"
        )
    return path.as_posix()


def extract(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path) -> None:
    """Write one entry, stopping at its declared size (a lying header cannot grow it)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    left = member.file_size
    with archive.open(member) as reader, target.open("wb") as writer:
        while chunk := reader.read(min(1 * MiB, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise BrokenSubmissionError(
                    f"could not grade: {member.filename} unpacks past its declared size"
                )
            writer.write(chunk)
