"""The day's checklist, with every item the lab can verify checked by the lab itself.

The checks and the typecheck run in subprocesses with timeouts (the same
commands a learner types), Postgres's catalog is read over a connection of
the kit's own, and the review items come from the learner's own marks.
Whatever cannot be verified here says so, and why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from labs.checking.protocol import StoreKind
from labs.checking.report import LineType
from labs.checking.rules import CHECK_NUMBERS
from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT

from . import questions, state, texts

CHECK_TIMEOUT = 180.0
TYPECHECK_TIMEOUT = 300.0


class Finding(StrEnum):
    """What a verification found: the fact holds, it does not, or the lab could not tell."""

    OK = "ok"
    NO = "no"
    UNKNOWN = "unknown"


class ItemStatus(StrEnum):
    """Where a checklist item stands."""

    DONE = "done"
    OPEN = "open"  # something the lab verified is not true yet
    UNVERIFIED = "unverified"  # the lab could not tell: the learner ticks it


@dataclass(frozen=True)
class Verification:
    """One fact the lab established (ok / no) or could not establish (unknown), in words."""

    kind: str
    state: Finding
    text: str


@dataclass
class Item:
    """A checklist item, what the lab verified for it, and whether the learner ticked it."""

    id: str
    text: str
    verifications: list[Verification] = field(default_factory=list)
    ticked: bool = False

    @property
    def status(self) -> ItemStatus:
        """done, open (something verified is not true yet) or unverified (tick it yourself)."""
        states = {v.state for v in self.verifications}
        if Finding.NO in states:
            return ItemStatus.OPEN
        if states == {Finding.OK}:
            return ItemStatus.DONE
        return ItemStatus.DONE if self.ticked else ItemStatus.UNVERIFIED


@dataclass(frozen=True)
class Settings:
    """What the checklist verifies against."""

    tree: str = "starter"
    database_url: str | None = None
    schema: str | None = None
    quick: bool = False  # skip the typecheck (about 35 s cold)


def items_data() -> list[dict[str, Any]]:
    """The checklist's items as the TOML file lists them."""
    return list(texts.load("checklist")["item"])


def phrase(kind: str, key: str, **values: object) -> str:
    """The sentence for one outcome of a verification, with its placeholders filled."""
    return str(texts.load("checklist")["verify"][kind][key]).format(**values)


def run_lab(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run `python -m labs ARGS` from the kit's root, without MOCK; raise TimeoutExpired."""
    env = {k: v for k, v in os.environ.items() if k not in ("MOCK", "SELFTEST")}
    return subprocess.run(
        [sys.executable, "-m", "labs", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def read_report(path: Path) -> tuple[dict[int, bool], str]:
    """The six checks' verdicts from a --report file, and the run's error if it had one."""
    verdicts: dict[int, bool] = {}
    error = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if entry.get("type") == LineType.RESULT and entry.get("number") in CHECK_NUMBERS:
            verdicts[int(entry["number"])] = bool(entry.get("passed"))
        elif entry.get("type") == LineType.REPORT:
            error = str(entry.get("error") or "")
    return verdicts, error


def verify_checks(settings: Settings, store: StoreKind) -> Verification:
    """Run the six checks on a store in a subprocess and say how many pass."""
    if store == StoreKind.POSTGRES and not settings.database_url:
        return Verification(store, Finding.UNKNOWN, phrase(store, "no_database"))
    with tempfile.TemporaryDirectory(prefix="lab-checklist-") as scratch:
        report = Path(scratch) / "report.jsonl"
        args = ["check", "--tree", settings.tree, "--store", store, "--report", str(report)]
        if settings.database_url:
            args += ["--database-url", settings.database_url]
        try:
            done = run_lab(args, CHECK_TIMEOUT)
        except subprocess.TimeoutExpired:
            why = f"no answer within {CHECK_TIMEOUT:g} s"
            return Verification(store, Finding.UNKNOWN, phrase(store, "unknown", why=why))
        verdicts, error = read_report(report) if report.exists() else ({}, "")
        if error or not verdicts:
            why = error or last_line(done.stderr) or f"exit code {done.returncode}"
            return Verification(store, Finding.UNKNOWN, phrase(store, "unknown", why=why))
    failing = [n for n in CHECK_NUMBERS if not verdicts.get(n, False)]
    if not failing:
        return Verification(store, Finding.OK, phrase(store, "ok"))
    listed = ", ".join(map(str, failing))
    return Verification(
        store, Finding.NO, phrase(store, "no", passed=6 - len(failing), failing=listed)
    )


def verify_typecheck(settings: Settings) -> Verification:
    """Run `python -m labs typecheck TREE` in a subprocess."""
    if settings.quick:
        return Verification("typecheck", Finding.UNKNOWN, phrase("typecheck", "skipped"))
    try:
        done = run_lab(["typecheck", settings.tree], TYPECHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        why = f"no answer within {TYPECHECK_TIMEOUT:g} s"
        return Verification("typecheck", Finding.UNKNOWN, phrase("typecheck", "unknown", why=why))
    if done.returncode == 0:
        return Verification("typecheck", Finding.OK, phrase("typecheck", "ok"))
    why = last_line(done.stdout) or last_line(done.stderr) or f"exit code {done.returncode}"
    if "error:" in done.stdout or "Found " in done.stdout:
        return Verification(
            "typecheck", Finding.NO, phrase("typecheck", "no", why=why, tree=settings.tree)
        )
    return Verification("typecheck", Finding.UNKNOWN, phrase("typecheck", "unknown", why=why))


def tree_name(settings: Settings) -> str:
    """The tree whose migrations folder and Postgres schema are meant."""
    return settings.tree if settings.tree in ("starter", "solution") else "starter"


def verify_migration(settings: Settings) -> Verification:
    """Is there a migration file for the tree, and (with a database) is it applied?"""
    from labs.pg.catalog import CatalogError, latest_migration, migration_head

    tree = tree_name(settings)
    try:
        revision = latest_migration(tree)
    except Exception as error:  # a learner's migration file may be broken in any way
        why = f"{type(error).__name__}: {error}"
        return Verification("migration", Finding.UNKNOWN, phrase("migration", "unknown", why=why))
    if revision is None:
        return Verification("migration", Finding.NO, phrase("migration", "no", tree=tree))
    if not settings.database_url:
        return Verification(
            "migration", Finding.OK, phrase("migration", "ok", revision=revision, tree=tree)
        )
    try:
        head = migration_head(settings.database_url, settings.schema or tree)
    except CatalogError as error:
        return Verification("migration", Finding.UNKNOWN, phrase("migration", "unknown", why=error))
    key = "applied" if head == revision else "not_applied"
    return Verification(
        "migration",
        Finding.OK if head == revision else Finding.NO,
        phrase("migration", key, revision=revision, tree=tree, head=head or "none"),
    )


def verify_constraints(settings: Settings) -> Verification:
    """Does Postgres's own catalog hold both unique constraints the lab needs?"""
    from labs.pg.catalog import CatalogError, constraints_report, required_constraints

    if not settings.database_url:
        return Verification("constraints", Finding.UNKNOWN, phrase("constraints", "no_database"))
    schema = settings.schema or tree_name(settings)
    try:
        entries = constraints_report(settings.database_url, schema)
    except CatalogError as error:
        return Verification(
            "constraints", Finding.UNKNOWN, phrase("constraints", "unknown", why=error)
        )
    if not entries:
        return Verification(
            "constraints", Finding.NO, phrase("constraints", "no_tables", schema=schema)
        )
    needs = required_constraints(entries)
    missing = [str(need) for need in needs if not need.present]
    if missing:
        return Verification(
            "constraints", Finding.NO, phrase("constraints", "no", missing=" and ".join(missing))
        )
    found = ", ".join(f"{need} ({need.met_by})" for need in needs)
    return Verification("constraints", Finding.OK, phrase("constraints", "ok", found=found))


def verify_review(which: str) -> Verification:
    """From the learner's own marks: one question got, or three of the four core ones."""
    if which == "core":
        got = questions.core_got()
        key = "ok" if got >= questions.CORE_NEEDED else "no"
        return Verification(
            "review",
            Finding.OK if got >= questions.CORE_NEEDED else Finding.NO,
            phrase("core", key, got=got),
        )
    question = questions.find(which)
    saved = questions.saved_answers().get(which, questions.Saved())
    marks = questions.labels()
    title = question.question
    if saved.mark == questions.Mark.GOT:
        return Verification("review", Finding.OK, phrase("review", "ok", question=title, id=which))
    if not saved.mark:
        return Verification(
            "review", Finding.NO, phrase("review", "unmarked", question=title, id=which)
        )
    mark = marks[f"mark_{saved.mark}"]
    return Verification(
        "review", Finding.NO, phrase("review", "no", question=title, mark=mark, id=which)
    )


def checklist(settings: Settings) -> list[Item]:
    """Every item with what the lab verified for it; the slow verifications run side by side."""
    wanted = {kind for entry in items_data() for kind in entry["verify"]}
    slow = {
        "memory": lambda: verify_checks(settings, StoreKind.MEMORY),
        "postgres": lambda: verify_checks(settings, StoreKind.POSTGRES),
        "typecheck": lambda: verify_typecheck(settings),
    }
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {kind: pool.submit(run) for kind, run in slow.items() if kind in wanted}
        found: dict[str, Verification] = {}
        if "migration" in wanted:
            found["migration"] = verify_migration(settings)
        if "constraints" in wanted:
            found["constraints"] = verify_constraints(settings)
        found.update({kind: future.result() for kind, future in futures.items()})
    ticks = ticked_items()
    items = []
    for entry in items_data():
        verifications = [
            verify_review(kind.partition(":")[2]) if kind.startswith("review:") else found[kind]
            for kind in entry["verify"]
        ]
        items.append(Item(entry["id"], entry["text"], verifications, entry["id"] in ticks))
    return items


def ticked_items() -> set[str]:
    """The items the learner ticked by hand."""
    ticks = state.section(state.load_state(), "checklist")
    return {item for item, ticked in ticks.items() if ticked is True}


def tick(item_id: str, ticked: bool = True) -> None:
    """Remember that the learner ticked (or unticked) an item; KeyError for an unknown id."""
    ids = [entry["id"] for entry in items_data()]
    if item_id not in ids:
        raise KeyError(
            _("no checklist item {item}: choose one of {choices}").format(
                item=repr(item_id), choices=", ".join(ids)
            )
        )
    with state.editing() as data:
        state.section(data, "checklist")[item_id] = ticked


def last_line(text: str) -> str:
    """The last non-empty line of a process's output."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""
