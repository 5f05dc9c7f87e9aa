"""The typecheck criterion: mypy --strict over a tree, sandboxed, only its own errors counted.

mypy does not run the learner's code, but a pathological file can make it
take any memory or time, so it runs in a sandbox under limits. A class's
trees are checked by one mypy (the libraries are read once), each from a
cache seeded with the libraries' and the kit's, built once.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from labs.sandbox.box import Sandbox
from labs.sandbox.limits import Limits, MiB
from labs.trees.finding import REPO_ROOT, tree_root
from labs.trees.regions import copy_tree

from .criteria import Outcome
from .isolate import child_env

# mypy over a tree needs more room than the checks; the limits still bound it.
TYPECHECK_LIMITS = Limits(cpu_seconds=600, address_space=6144 * MiB, output_bytes=8 * MiB)
BLOCKED = "prevented further checking"  # mypy's words when a file does not parse
CUT = "bytes of output left out"  # CappedOutput's mark where it dropped the middle
MYPY_ERROR = re.compile(r"^(?P<path>[^:\s][^:]*):\d+(:\d+)?: error:")


# Built once and kept, like any cache; mypy rechecks whatever changed since.
BASELINE = REPO_ROOT / ".mypy_cache" / "lab-grading-baseline"
_BASELINE_LOCK = threading.Lock()


def baseline_cache() -> Path | None:
    """A mypy cache holding the libraries and labs/, built once for all grading runs.

    It is built from a copy of the solution under a name no submission has,
    because mypy keys its cache by module name: a cache that knew another
    tree called "starter" could pass a learner's broken "starter" unchecked.
    """
    with _BASELINE_LOCK:
        if not BASELINE.is_dir():
            BASELINE.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=BASELINE.parent) as home:
                # The learners' release has no solution: the starter's imports are the same.
                source = tree_root("solution")
                source = source if source.is_dir() else tree_root("starter")
                tree = copy_tree(source, Path(home) / f"baseline_{secrets.token_hex(4)}")
                with contextlib.suppress(subprocess.TimeoutExpired):
                    subprocess.run(
                        [sys.executable, "-m", "labs", "typecheck", str(tree)],
                        cwd=REPO_ROOT,
                        capture_output=True,
                        timeout=300,
                        check=False,
                        env=child_env({"MYPY_CACHE_DIR": str(Path(home) / "c")}),
                    )
                # Another grading process may have finished first: either copy will do.
                with contextlib.suppress(OSError):
                    (Path(home) / "c").rename(BASELINE)
    return BASELINE if BASELINE.is_dir() else None


def seeded_cache(scratch: Path) -> str:
    """A mypy cache of this submission's own, seeded from the baseline for speed."""
    cache, baseline = scratch / "mypy_cache", baseline_cache()
    if baseline is not None:
        shutil.copytree(baseline, cache)
    return str(cache)


def inside(tree: Path, line: str) -> bool:
    """Whether a line of mypy's output is an error in a file of the tree."""
    match = MYPY_ERROR.match(line)
    if not match:
        return False
    path = Path(match["path"])
    path = path if path.is_absolute() else REPO_ROOT / path
    return os.path.abspath(path).startswith(str(tree) + os.sep)


def type_errors(tree: Path, errors: list[str]) -> Outcome:
    """A failed typecheck showing the first errors, with paths relative to the tree."""
    shown = "\n".join(errors[:10]).replace(str(tree) + os.sep, "")
    return Outcome("fail", f"{len(errors)} type error(s) in the tree", shown[:500])


def typecheck_trees(trees: list[Path], timeout: float) -> dict[Path, Outcome]:
    """One sandboxed mypy over many trees, each a package of its own name: their outcomes.

    One mypy for a class costs little more than one for a tree (the libraries
    are read once). mypy stops at a file that does not parse ("errors
    prevented further checking"): the trees with errors are settled and the
    rest are checked again without them. Trees left out of the answer (mypy
    crashed, timed out, or wrote more than was kept) are for their own
    Grader.typecheck() to check alone.
    """
    results: dict[Path, Outcome] = {}
    remaining = list(trees)
    while remaining:
        with Sandbox(TYPECHECK_LIMITS) as box:
            copies = {box.share(tree, tree.name): tree for tree in remaining}
            cache = box.give(Path(seeded_cache(box.home)))
            done = box.run(
                [sys.executable, "-m", "labs", "typecheck", *map(str, copies)],
                timeout=timeout + 2 * len(copies),
                env={"MYPY_CACHE_DIR": str(cache)},
            )
        if done.timed_out or CUT in done.stdout:
            break
        lines = done.stdout.splitlines()
        if done.returncode and not any(MYPY_ERROR.match(line) for line in lines):
            break  # mypy itself failed
        blocked = BLOCKED in done.stdout
        for copy, tree in copies.items():
            errors = [line for line in lines if inside(copy, line)]
            if errors:
                results[tree] = type_errors(copy, errors)
            elif not blocked:
                results[tree] = Outcome("pass")
        before, remaining = len(remaining), [t for t in remaining if t not in results]
        if not blocked or len(remaining) == before:
            break
    return results


def typecheck_tree(tree: Path, name: str, timeout: float) -> Outcome:
    """mypy --strict via `python -m labs typecheck` over one tree (copied in as name), sandboxed."""
    with Sandbox(TYPECHECK_LIMITS) as box:
        copy = box.share(tree, name)
        cache = box.give(Path(seeded_cache(box.home)))
        done = box.run(
            [sys.executable, "-m", "labs", "typecheck", str(copy)],
            timeout=timeout,
            env={"MYPY_CACHE_DIR": str(cache)},
        )
    if done.timed_out:
        return Outcome("fail", f"the typecheck did not finish within {timeout:g} s")
    errors = [line for line in done.stdout.splitlines() if inside(copy, line)]
    if errors:
        return type_errors(copy, errors)
    if done.returncode and not MYPY_ERROR.search(done.stdout or ""):
        return Outcome(
            "fail", "mypy could not check the tree", (done.stdout + done.stderr).strip()[-500:]
        )
    return Outcome("pass")
