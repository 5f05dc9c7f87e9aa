"""A hand-in taken in: a folder or a zip copied once to scratch space, never trusted on the way.

A hand-in is the learner's: a folder may hold symbolic links (to /dev/zero,
to another learner's folder, to the instructor's key) and a zip may be a bomb
(a few megabytes that unpack to gigabytes), hold `../` paths or links, and
either may hold a folder 1,200 deep or 60,000 empty folders. So a folder is
walked without following links (and without recursion) and only its regular
files are copied; a zip's directory is checked (entry count, total size,
folder count and depth, paths, links) before anything is written, and each
entry is copied with a byte count that stops at the declared size. Links are
never read: each one is named in a note.

What is not the lesson's (virtualenvs, node_modules, VCS folders, caches,
large files that are not Python: left_out.py) is left out first, in folders
and zips alike, and named in a note; the caps count only what remains. Past
any cap the hand-in is refused with a note saying which, naming the largest
paths that remain.

This is the grader's one copy of the learner's files. It lies in the
grader's own scratch space (a folder only the grader may enter) and is only
read from then on, never run: the learner's code runs in a sandbox that is
given a copy of what it needs (labs/sandbox/box.py), so nothing a submission
does there reaches what the grader reads.
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from labs.sandbox.limits import MiB
from labs.term.i18n import _

from ..untrusted import clean_text
from .errors import BrokenSubmissionError
from .left_out import (
    VENV_MARK,
    Kind,
    LeftOut,
    file_kind,
    folder_kind,
    left_out_folder,
    left_out_note,
    listed,
)

MAX_FILES = 2000  # a tree is ~40 files; caches and virtualenvs are left out before counting
MAX_BYTES = 64 * MiB  # unpacked; a tree with its migrations is well under 1 MB
MAX_DIRS = 500  # a tree has about ten folders
MAX_DEPTH = 24  # folders below the hand-in's top; a tree is four deep
MAX_ENTRIES = 100_000  # a zip's whole directory, what is left out included
SHOWN = 5
LARGEST = 3  # paths named when a hand-in is refused for its size


@dataclass
class HandIn:
    """Where a submission was copied, and what was left out on the way."""

    root: Path
    links: list[str] = field(default_factory=list)  # "path -> target", not followed
    others: list[str] = field(default_factory=list)  # devices, pipes, sockets
    left_out: list[LeftOut] = field(default_factory=list)  # not the lesson's

    def notes(self) -> list[str]:
        """What an instructor should know about the hand-in itself."""
        found = [
            clean_text(f"{kind} in the hand-in were not followed: {listed(items, SHOWN)}")
            for kind, items in (("links", self.links), ("special files", self.others))
            if items
        ]
        note = left_out_note(self.left_out)
        return [*found, note] if note else found


@dataclass(frozen=True)
class Kept:
    """A regular file that will be copied: its path from the hand-in's top, and its size."""

    relative: str
    size: int

    @property
    def shown(self) -> LeftOut:
        """The file as a note names a large one: its path and its size."""
        return LeftOut(self.relative, Kind.LARGE, self.size)


def take_in(source: Path, into: Path) -> HandIn:
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


def is_regular(path: Path) -> bool:
    """Whether path is a regular file, not following a link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def copy_folder(source: Path, destination: Path) -> HandIn:
    """Copy regular files only, never following a link; name the links and special files.

    Everything is looked at before anything is copied, so the caps count only
    what is kept and a refusal can name the largest files.
    """
    hand_in, folders, kept = HandIn(destination), list[Path](), list[Kept]()
    for here, dirs, files in walk(source):
        relative = here.relative_to(source)
        folders.append(relative)
        for name in [*dirs]:
            kind = folder_kind(name, holds_venv_mark=is_regular(here / name / VENV_MARK))
            if kind is not None:
                dirs.remove(name)
                hand_in.left_out.append(LeftOut(f"{(relative / name).as_posix()}/", kind))
        for name in files:
            path = here / name
            info = os.lstat(path)
            shown = (relative / name).as_posix()
            if stat.S_ISLNK(info.st_mode):
                hand_in.links.append(link_text(path, relative / name))
            elif not stat.S_ISREG(info.st_mode):
                hand_in.others.append(shown)
            elif (kind := file_kind(name, info.st_size)) is not None:
                hand_in.left_out.append(LeftOut(shown, kind, info.st_size))
            else:
                kept.append(Kept(shown, info.st_size))
                if len(kept) > MAX_FILES:
                    check_size(kept)
    check_size(kept)
    for folder in folders:
        (destination / folder).mkdir(parents=True, exist_ok=True)
    for file in kept:
        copy_regular(source / file.relative, destination / file.relative, file.size)
    return hand_in


def link_text(path: Path, relative: Path) -> str:
    """A link as `relative -> target`, read with readlink (the target is never opened)."""
    return f"{relative.as_posix()} -> {os.readlink(path)}"


def copy_regular(path: Path, target: Path, size: int) -> None:
    """Copy one regular file, at most the size it had when it was counted.

    Anything else is refused when opened (it could have been swapped).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    handle = os.open(path, flags)
    with os.fdopen(handle, "rb") as reader:
        if not stat.S_ISREG(os.fstat(reader.fileno()).st_mode):
            return
        with target.open("wb") as writer:
            left = size
            while left > 0 and (chunk := reader.read(min(1 * MiB, left))):
                writer.write(chunk)
                left -= len(chunk)


def check_size(kept: list[Kept]) -> None:
    """Refuse a hand-in whose kept files are more, or larger, than any tree needs.

    The refusal names where the files are (by folder) or the largest files.
    """
    if len(kept) > MAX_FILES:
        crowded = Counter(str(PurePosixPath(file.relative).parent) for file in kept)
        folders = [
            _("{folder} ({count} files)").format(folder=clean_text(folder, 200), count=count)
            for folder, count in crowded.most_common(LARGEST)
        ]
        raise BrokenSubmissionError(
            _(
                "could not grade: more than {count} files in the hand-in, once what is not the "
                "lesson's was left out; most are in {folders}"
            ).format(count=MAX_FILES, folders=listed(folders))
        )
    if sum(file.size for file in kept) > MAX_BYTES:
        first, *more = sorted(kept, key=lambda file: -file.size)[:LARGEST]
        largest = [first, *(file for file in more if file.size >= MiB)]  # none of 0.0 MB
        raise BrokenSubmissionError(
            _(
                "could not grade: more than {size} MB in the hand-in (a lab tree is well under "
                "1 MB), once what is not the lesson's was left out; the largest: {paths}"
            ).format(size=MAX_BYTES // MiB, paths=listed([str(f.shown) for f in largest]))
        )


def unpack_zip(source: Path, destination: Path) -> HandIn:
    """Check a zip's directory, then extract its regular files with a running byte count."""
    hand_in = HandIn(destination)
    try:
        with zipfile.ZipFile(source) as archive:
            members = archive.infolist()
            if len(members) > MAX_ENTRIES:
                raise BrokenSubmissionError(
                    _("could not grade: the zip lists more than {count} entries").format(
                        count=MAX_ENTRIES
                    )
                )
            kept, folders = sort_members(archive, members, hand_in)
            check_size([file for _, file in kept])
            check_folders(len(folders), max((len(f.parts) for f in folders), default=0))
            for folder in folders:
                (destination / folder).mkdir(parents=True, exist_ok=True)
            for member, file in kept:
                extract(archive, member, destination / file.relative)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as error:
        raise BrokenSubmissionError(f"the zip does not unpack: {clean_text(str(error))}") from None
    return hand_in


def sort_members(
    archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], hand_in: HandIn
) -> tuple[list[tuple[zipfile.ZipInfo, Kept]], set[PurePosixPath]]:
    """The zip's files to extract and the folders they need; the rest noted on hand_in.

    Every path is checked first, whether or not it is left out.
    """
    paths = [PurePosixPath(safe_name(member.filename)) for member in members]
    venvs = {
        path.parent
        for path, member in zip(paths, members, strict=True)
        if path.name == VENV_MARK and not member.is_dir()
    }
    kept = list[tuple[zipfile.ZipInfo, Kept]]()
    folders, skipped = set[PurePosixPath](), dict[PurePosixPath, Kind]()
    for path, member in zip(paths, members, strict=True):
        top = left_out_folder(path if member.is_dir() else path.parent, venvs)
        kind = stat.S_IFMT(member.external_attr >> 16)
        if top is not None:
            skipped.setdefault(*top)
        elif kind == stat.S_IFLNK:
            hand_in.links.append(f"{path} -> {link_target(archive, member)}")
        elif member.is_dir():
            folders.add(path)
        elif kind not in (0, stat.S_IFREG):
            hand_in.others.append(path.as_posix())
        elif (left := file_kind(path.name, member.file_size)) is not None:
            hand_in.left_out.append(LeftOut(path.as_posix(), left, member.file_size))
        else:
            kept.append((member, Kept(path.as_posix(), member.file_size)))
            folders.update(p for p in path.parents if p != PurePosixPath("."))
    folders.discard(PurePosixPath("."))
    hand_in.left_out[:0] = [LeftOut(f"{path}/", kind) for path, kind in skipped.items()]
    return kept, folders


def link_target(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> str:
    """A link entry's target, as the first 200 bytes of its data say (never followed)."""
    with archive.open(member) as reader:
        return reader.read(200).decode("utf-8", "replace")


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
