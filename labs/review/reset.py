"""Putting a check's TODO regions back to the starter's text as shipped.

The shipped text comes from the lab kit's own copy of the starter (the
installed `starter` package) when that copy is not the tree being reset and
git says it is untouched; otherwise from git (HEAD, or the revision given).
Before a file is rewritten, what was there is copied into a timestamped
backup folder under this checkout's state folder (state.py), with a
reset.json saying which tree and check it was and what the reset wrote. That
is what undo_reset reads: it puts the files back only while each still holds
exactly what the reset wrote, so an edit made since is never lost.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from labs.trees.finding import REPO_ROOT
from labs.trees.regions import Region, RegionError, parse_regions, read_lines, source_files

from . import state
from .texts import message

Reader = Callable[[str], list[str] | None]
MANIFEST = "reset.json"


class ResetError(Exception):
    """The regions cannot be put back (no shipped copy, markers broken or missing)."""


@dataclass
class Shipped:
    """Where the starter as shipped is read from, and how to read one of its files."""

    description: str
    read: Reader


@dataclass
class ResetOutcome:
    """What a reset changed: the regions put back, the files untouched, the backup folder."""

    source: str
    restored: list[Region] = field(default_factory=list)
    unchanged: list[Region] = field(default_factory=list)
    backup: Path | None = None


def kit_starter() -> Path | None:
    """The folder of the lab kit's own starter package, if one is installed."""
    spec = importlib.util.find_spec("starter")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent


def git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str] | None:
    """Run git; None when git is not installed."""
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def edited_in_git(folder: Path) -> bool:
    """True when git tracks the folder and it differs from HEAD."""
    done = git("status", "--porcelain", "--", ".", cwd=folder)
    return done is not None and done.returncode == 0 and bool(done.stdout.strip())


def from_git(revision: str, kit: Path) -> Shipped:
    """The starter as git holds it at revision, or ResetError saying why it cannot be read."""
    top = git("rev-parse", "--show-toplevel", cwd=kit)
    if top is None or top.returncode != 0:
        raise ResetError(message("reset", "no_git", kit=kit))
    prefix = kit.relative_to(Path(top.stdout.strip()).resolve()).as_posix()
    known = git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=kit)
    if known is None or known.returncode != 0:
        raise ResetError(message("reset", "unknown_revision", revision=revision))

    def read(relative: str) -> list[str] | None:
        done = git("show", f"{revision}:{prefix}/{relative}", cwd=kit)
        return done.stdout.splitlines() if done is not None and done.returncode == 0 else None

    return Shipped(f"git {revision}:{prefix}/", read)


def shipped_starter(tree: Path, revision: str | None = None) -> Shipped:
    """Choose where the starter as shipped is read from (see the module's docstring)."""
    kit = kit_starter() or REPO_ROOT / "starter"
    if revision is None and kit != tree.resolve() and not edited_in_git(kit):

        def read(relative: str) -> list[str] | None:
            path = kit / relative
            return read_lines(path) if path.is_file() else None

        return Shipped(message("reset", "kit_source", kit=kit), read)
    return from_git(revision or "HEAD", kit)


def regions_of(relative: str, lines: list[str], number: int, where: str) -> list[Region]:
    """The file's regions for check N, or ResetError naming the broken marker."""
    try:
        return [r for r in parse_regions(relative, lines) if r.check == number]
    except RegionError as error:
        raise ResetError(message("reset", "broken_markers", where=where, problem=error)) from None


def reset_check(tree: Path, number: int, revision: str | None = None) -> ResetOutcome:
    """Put every TODO(check N) region of the tree back to the shipped starter's body."""
    shipped = shipped_starter(tree, revision)
    outcome = ResetOutcome(shipped.description)
    plans: list[tuple[str, list[str]]] = []
    for relative in source_files(tree):
        if not relative.endswith(".py"):
            continue
        original = shipped.read(relative)
        if original is None:
            continue
        wanted = regions_of(relative, original, number, shipped.description)
        if not wanted:
            continue
        lines = read_lines(tree / relative)
        mine = regions_of(relative, lines, number, str(tree))
        if any(region.tag != "TODO" for region in mine):
            raise ResetError(message("reset", "solution_tree", path=tree / relative))
        if len(mine) != len(wanted):
            raise ResetError(
                message(
                    "reset",
                    "count_differs",
                    path=tree / relative,
                    mine=len(mine),
                    wanted=len(wanted),
                    number=number,
                    source=shipped.description,
                )
            )
        # Bottom-up, so the earlier regions' line numbers stay valid while splicing.
        changed = False
        for region, theirs in reversed(list(zip(mine, wanted, strict=True))):
            if region.body_lines == theirs.body_lines:
                outcome.unchanged.append(region)
                continue
            lines[region.start : region.end - 1] = list(theirs.body_lines)
            outcome.restored.append(region)
            changed = True
        if changed:
            plans.append((relative, lines))
    if not plans and not outcome.unchanged:
        raise ResetError(message("reset", "no_region", source=shipped.description, number=number))
    if plans:
        written = {relative: "\n".join(lines) + "\n" for relative, lines in plans}
        outcome.backup = backup(tree, number, written)
        for relative, text in written.items():
            (tree / relative).write_text(text, encoding="utf-8")
    outcome.restored.sort(key=lambda r: (r.path, r.start))
    return outcome


def digest(text: bytes) -> str:
    """A file's content, as a hash to compare it with later."""
    return hashlib.sha256(text).hexdigest()


def backup(tree: Path, number: int, written: dict[str, str]) -> Path:
    """Copy the files about to be rewritten into <state>/backups/<time>-<tree name>/.

    Its reset.json records the tree, the check and a hash of the text each file is about to
    receive, so an undo can tell whether the file changed since.
    """
    stamp = time.strftime("%Y%m%d-%H%M%S")
    folder = state.state_dir() / "backups" / f"{stamp}-{tree.name}"
    suffix = 1
    while folder.exists():  # two resets in one second keep both backups
        suffix += 1
        folder = folder.with_name(f"{stamp}-{tree.name}-{suffix}")
    for relative in written:
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / relative, target)
    manifest = {
        "tree": state.tree_key(tree),
        "check": number,
        "at": time.time(),
        "files": {relative: digest(text.encode("utf-8")) for relative, text in written.items()},
    }
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return folder


def manifests() -> list[tuple[Path, dict[str, object]]]:
    """Every backup folder of this checkout with its reset.json, oldest first."""
    found = []
    for path in (state.state_dir() / "backups").glob(f"*/{MANIFEST}"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("files"), dict):
            found.append((path.parent, data))
    return sorted(found, key=lambda entry: float(str(entry[1].get("at", 0))))


def undo_reset(tree: Path, number: int) -> tuple[Path, list[str]]:
    """Put back what the last reset of check N in this tree replaced; its backup and files.

    ResetError, changing nothing, when no reset of it is left to undo, or when
    a file it wrote has changed since (the learner's newer edits would be lost).
    """
    key = state.tree_key(tree)
    mine = [
        (folder, data)
        for folder, data in manifests()
        if data.get("tree") == key and data.get("check") == number and not data.get("undone")
    ]
    if not mine:
        raise ResetError(message("reset", "nothing_to_undo", number=number, tree=tree))
    folder, data = mine[-1]
    files = data["files"]
    assert isinstance(files, dict)
    changed = [
        relative
        for relative, written in sorted(files.items())
        if not (tree / relative).is_file() or digest((tree / relative).read_bytes()) != written
    ]
    if changed:
        raise ResetError(
            message(
                "reset",
                "changed_since",
                number=number,
                files=", ".join(changed),
                backup=folder,
            )
        )
    for relative in sorted(files):
        shutil.copy2(folder / relative, tree / relative)
    data["undone"] = time.time()
    (folder / MANIFEST).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return folder, sorted(files)
