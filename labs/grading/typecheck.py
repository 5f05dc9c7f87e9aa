"""The typecheck criterion: mypy --strict over the spliced tree, sandboxed, only its own errors.

mypy does not run the learner's code, but what it reads can steer it: a
`keys.pyi` beside `keys.py` hides keys.py's errors, a `flask/__init__.pyi`
replaces Flask's types, a `setup.cfg` or `# mypy:` line switches checks
off. So mypy reads only the spliced tree (the shipped starter with the
submission's region bodies: no file of the hand-in's own, see splice.py),
with the kit's own settings file (labs.trees.typechecking, the same as
pyproject.toml's [tool.mypy]), each submission in a sandbox of its own with a
cache of its own, seeded with the libraries' from a baseline built once. A
pathological file can make mypy take any memory or time, so the sandbox's
limits bound it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from labs.sandbox.box import Sandbox
from labs.sandbox.limits import Limits, MiB
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree
from labs.trees.typechecking import MYPY_SETTINGS, mypy_command

from ..untrusted import clip
from .criteria import Outcome
from .isolate import child_env

# mypy over a tree needs more room than the checks; the limits still bound it.
TYPECHECK_LIMITS = Limits(
    cpu_seconds=600,
    address_space=6144 * MiB,
    fallback_address_space=4096 * MiB,
    memory=3072 * MiB,
    output_bytes=8 * MiB,
)
ERRORS_SHOWN = 5  # mypy's first errors are the ones to fix first; the rest often follow from them
ERROR_LINE_LIMIT = 300
CUT = "bytes of output left out"  # CappedOutput's mark where it dropped the middle
MYPY_ERROR = re.compile(r"^(?P<path>[^:\s][^:]*):\d+(:\d+)?: error:")

INSTALLED = ("site-packages", "dist-packages")  # where an installed kit's root is
_BASELINE_LOCK = threading.Lock()


def kit_path() -> dict[str, str]:
    """Where mypy finds the kit, for the environment of a run from outside the checkout.

    A tree may import the kit (its __main__ runs the self-checks), so mypy
    reads the kit as source from its root, as `python -m labs typecheck` does
    in a checkout. A grading install keeps the kit in site-packages, which mypy
    refuses on its path: there it reads the kit as an installed package, typed
    by the py.typed marker the package ships.
    """
    return {} if REPO_ROOT.name in INSTALLED else {"MYPYPATH": str(REPO_ROOT)}


def baseline_places(key: str | None = None) -> list[Path]:
    """Where the baseline may be kept, in order: beside the kit, then in this user's cache.

    Built once for each baseline_key and kept, like any cache. The second
    place serves a grader that may not enter the first: an unprivileged
    instructor after root graded here, whose umask 077 kept .mypy_cache to
    root, or a kit installed where only root may write.
    """
    key = key or baseline_key(REPO_ROOT)
    places = [REPO_ROOT / ".mypy_cache" / f"lab-grading-baseline-{key}"]
    with contextlib.suppress(RuntimeError, KeyError):  # no home: only the kit's place
        home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        places.append(Path(home) / "mini-koda-lab" / f"mypy-baseline-{key}")
    return places


def baseline_key(root: Path) -> str:
    """What a baseline holds, as a digest: Python's and mypy's versions, the settings, and
    the kit's own source (a tree imports the kit, so mypy reads it as part of each tree).

    A baseline whose kit has changed since is never used: mypy would recheck
    the whole kit for every submission (five times slower here) instead of once.
    """
    digest = hashlib.sha256(f"{sys.version}\n{mypy_version()}\n".encode())
    digest.update(MYPY_SETTINGS.read_bytes())
    for path in sorted((root / "labs").rglob("*.py*")):
        if path.suffix in (".py", ".pyi"):
            digest.update(f"{path.relative_to(root)}\n".encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def mypy_version() -> str:
    """The installed mypy's version, or "" without one (the typecheck then says so)."""
    try:
        return importlib.metadata.version("mypy")
    except importlib.metadata.PackageNotFoundError:
        return ""


def baseline_cache() -> Path | None:
    """A mypy cache holding the libraries, built once for all grading runs (None if it cannot be).

    It is built from a copy of the solution under a name no submission has,
    because mypy keys its cache by module name: a cache that knew another
    tree called "starter" could pass a learner's broken "starter" unchecked.
    A place this user may not read or write is passed over; with none left
    the typecheck runs without a baseline, only slower.
    """
    with _BASELINE_LOCK:
        for place in baseline_places():
            try:
                if not place.is_dir():
                    with building(place):  # one build for all the processes that need it
                        if not place.is_dir():
                            build_baseline(place)
                if place.is_dir() and os.access(place, os.R_OK | os.X_OK):
                    return place
            except OSError:
                continue
    return None


@contextlib.contextmanager
def building(place: Path) -> Iterator[None]:
    """Hold the lock under which one process builds the baseline at place; others wait for it.

    Without it, every grading process (and every self-check beside it) that
    starts before the first build ends would build its own: as many cold mypy
    runs at once as there are processes.
    """
    place.parent.mkdir(parents=True, exist_ok=True)
    with open(place.parent / f".{place.name}.lock", "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_baseline(place: Path) -> None:
    """mypy over a renamed copy of the solution (or the starter), its cache kept at place."""
    place.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=place.parent) as home:
        # The learners' release has no solution: the starter's imports are the same.
        source = tree_root("solution")
        source = source if source.is_dir() else tree_root("starter")
        tree = copy_tree(source, Path(home) / f"baseline_{secrets.token_hex(4)}")
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                mypy_command([tree], Path(home) / "c"),
                cwd=home,
                capture_output=True,
                timeout=300,
                check=False,
                env=child_env(kit_path()),
            )
        # Another grading process may have finished first: either copy will do.
        with contextlib.suppress(OSError):
            (Path(home) / "c").rename(place)
    # The baselines of an earlier kit are never used again.
    stem = place.name.rpartition("-")[0]
    for older in place.parent.glob(f"{stem}-*") if stem else []:
        if older != place and older.is_dir():
            shutil.rmtree(older, ignore_errors=True)


def inside(tree: Path, line: str, cwd: Path) -> bool:
    """Whether a line of mypy's output is an error in a file of the tree."""
    match = MYPY_ERROR.match(line)
    if not match:
        return False
    path = Path(match["path"])
    path = path if path.is_absolute() else cwd / path
    return os.path.abspath(path).startswith(str(tree) + os.sep)


def type_errors(tree: Path, errors: list[str]) -> Outcome:
    """A failed typecheck showing mypy's first errors whole, paths from the tree's folder.

    A path starts at the tree's own folder (`starter/shared/keys.py:14`), as in
    the learner's checkout; the grader names the folder as the hand-in does (places.py).
    """
    shown = [
        clip(line.replace(str(tree.parent) + os.sep, ""), ERROR_LINE_LIMIT)
        for line in errors[:ERRORS_SHOWN]
    ]
    if len(errors) > ERRORS_SHOWN:
        shown.append(f"… and {len(errors) - ERRORS_SHOWN} more")
    return Outcome("fail", f"{len(errors)} type error(s) in the tree", "\n".join(shown))


def typecheck_tree(tree: Path, name: str, timeout: float) -> Outcome:
    """mypy --strict over one spliced tree (copied in as name), in its own sandbox and cache."""
    with Sandbox(TYPECHECK_LIMITS) as box:
        copy = box.share(tree, name)
        cache = box.home / "mypy_cache"
        baseline = baseline_cache()
        if baseline is not None:
            with contextlib.suppress(OSError):  # a partial cache is only slower
                shutil.copytree(baseline, cache)
        box.give(box.home)
        done = box.run(mypy_command([copy], cache), timeout=timeout, env=kit_path())
    if done.stopped:
        return Outcome("fail", f"the typecheck was stopped: {done.stopped}")
    if done.timed_out:
        return Outcome("fail", f"the typecheck did not finish within {timeout:g} s")
    lines = done.stdout.splitlines()
    errors = [line for line in lines if inside(copy, line, box.home)]
    if errors:
        return type_errors(copy, errors)
    failed = done.returncode and not any(MYPY_ERROR.match(line) for line in lines)
    if failed or CUT in done.stdout:
        return Outcome(
            "fail", "mypy could not check the tree", (done.stdout + done.stderr).strip()[-500:]
        )
    return Outcome("pass")
