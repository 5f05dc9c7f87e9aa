"""Grading one tree on every criterion; each kind is worked out once and remembered."""

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

from ..regions import copy_tree
from ..sandbox import Limits, MiB, Sandbox
from ..trees import REPO_ROOT, tree_root
from .criteria import CRITERIA, Criterion, Grade, Outcome
from .isolate import CHECK_NUMBERS, check_outcomes, child_env
from .migration import migration_files, missing_constraints
from .notes import add_notes
from .on_postgres import MigrationFailedError, migrated_schema

# mypy over a tree needs more room than the checks; the limits still bound it.
TYPECHECK_LIMITS = Limits(cpu_seconds=300, address_space=6144 * MiB)
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
                tree = copy_tree(
                    tree_root("solution"), Path(home) / f"baseline_{secrets.token_hex(4)}"
                )
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


class Grader:
    """Grades the tree at `tree`: checks out of process, typecheck, its migration."""

    def __init__(
        self,
        tree: Path,
        *,
        timeout: float = 10.0,
        typecheck_timeout: float = 120.0,
        database_url: str | None = None,
        migrations: Path | None = None,
    ) -> None:
        self.tree = tree.resolve()
        self.timeout = timeout
        self.typecheck_timeout = typecheck_timeout
        self.database_url = database_url
        self.migrations = migrations
        self._checks: dict[str, dict[int, Outcome]] = {}
        self._other: dict[str, Outcome] = {}

    def outcome(self, criterion: Criterion) -> Outcome:
        """How the tree does on one criterion."""
        if criterion.check is not None:
            if criterion.kind == "postgres" and not self.database_url:
                return Outcome(
                    "skip",
                    "no database configured: set DATABASE_URL to grade the checks on Postgres",
                )
            if criterion.kind not in self._checks:
                self._checks[criterion.kind] = self._run_checks(criterion.kind)
            return self._checks[criterion.kind][criterion.check]
        if criterion.kind not in self._other:
            work = self.typecheck if criterion.kind == "typecheck" else self.migration
            self._other[criterion.kind] = work()
        return self._other[criterion.kind]

    def _run_checks(self, store: str) -> dict[int, Outcome]:
        if store == "postgres":
            return self._run_checks_on_postgres()
        return check_outcomes(self.tree, store, timeout=self.timeout)

    def _run_checks_on_postgres(self) -> dict[int, Outcome]:
        """The six checks against a schema of this submission's own, built by its migration."""
        assert self.database_url is not None
        files = migration_files(self.tree, self.migrations)
        if not files:
            reason = "no migration of the tree's own to apply to Postgres"
            return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", reason))
        try:
            with migrated_schema(
                self.database_url, self.tree, files[0].parent, self.typecheck_timeout
            ) as tenant:
                return check_outcomes(
                    self.tree,
                    "postgres",
                    timeout=self.timeout,
                    database_url=tenant.url,
                    env={"DB_SCHEMA": tenant.schema},
                )
        except MigrationFailedError as error:
            return dict.fromkeys(CHECK_NUMBERS, Outcome("fail", str(error)))

    def typecheck(self) -> Outcome:
        """mypy --strict via `python -m labs typecheck`, sandboxed; only errors in the tree count.

        mypy does not run the learner's code, but a pathological file can make
        it take any memory or time, so it runs under the same limits.
        """
        with Sandbox(TYPECHECK_LIMITS) as box:
            tree = box.share(self.tree, self.tree.name)
            cache = Path(seeded_cache(box.home))
            box.give(cache)
            done = box.run(
                [sys.executable, "-m", "labs", "typecheck", str(tree)],
                timeout=self.typecheck_timeout,
                env={"MYPY_CACHE_DIR": str(cache)},
            )
        if done.timed_out:
            return Outcome(
                "fail", f"the typecheck did not finish within {self.typecheck_timeout:g} s"
            )
        errors = [line for line in done.stdout.splitlines() if inside(tree, line)]
        if errors:
            shown = "\n".join(errors[:10]).replace(str(tree) + os.sep, "")
            return Outcome("fail", f"{len(errors)} type error(s) in the tree", shown[:500])
        if done.returncode and not MYPY_ERROR.search(done.stdout or ""):
            return Outcome(
                "fail", "mypy could not check the tree", (done.stdout + done.stderr).strip()[-500:]
            )
        return Outcome("pass")

    def migration(self) -> Outcome:
        """Both unique constraints in the tree's own migration, read statically."""
        files = migration_files(self.tree, self.migrations)
        if not files:
            where = self.migrations or self.tree.parent / "migrations" / "versions" / self.tree.name
            return Outcome(
                "fail",
                f"no migration found in {where}: generate one with "
                "Alembic's --autogenerate after declaring the constraints",
            )
        missing = missing_constraints(files)
        if missing:
            return Outcome(
                "fail",
                "the migration does not create the unique constraint on "
                + " nor on ".join(missing),
                "read: " + ", ".join(p.name for p in files),
            )
        return Outcome("pass")

    def grade(self, name: str | None = None) -> Grade:
        """Every criterion's outcome, as one Grade, with the notes an instructor should read."""
        grade = Grade(name or self.tree.name)
        for criterion in CRITERIA:
            grade.outcomes[criterion.key] = self.outcome(criterion)
        self.annotate(grade)
        return grade

    def annotate(self, grade: Grade) -> None:
        """Add the notes an instructor should read (see notes.py)."""
        add_notes(grade, self.tree)
