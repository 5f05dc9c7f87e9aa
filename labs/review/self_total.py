"""The criteria the self-check does not run, judged as the grader judges them, for its total.

The self-check runs the six checks on one store; the grader also gives
points for the six on the other store, the typecheck and the tree's own
migration. So that both print the same total for the same tree, the
self-check asks the grader itself for those verdicts: a Grader on the tree
as it is, on the Postgres the grader would choose (server_choice.py), in a
process of its own while the checks run (`python -m labs.review.self_total
TREE DIGEST STORE`, which prints them as JSON).

A verdict depends on nothing but the tree's files, its migration scripts,
the kit and which Postgres grades it, so it is kept in this checkout's
state folder under a digest of those and worked out again only when one of
them changes: running the self-check twice on the same tree type-checks it
once. A verdict the machine could not give (no Postgres to grade on, a
server refusing the grader) is never kept; the total names it as not graded
here, with the reason, as the grader does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from labs.checking.protocol import StoreKind
from labs.grading.criteria import CRITERIA, Outcome
from labs.grading.migration import migration_files
from labs.grading.server_choice import chosen_server, grading_place
from labs.grading.typecheck import baseline_cache, baseline_key, baseline_places
from labs.term.i18n import _
from labs.trees.finding import REPO_ROOT

from .state import state_dir

KEPT_FILE = "verdicts.json"
KEPT_AT_MOST = 64  # verdicts kept; the oldest go first
WAIT_AT_MOST = 300.0  # seconds: a typecheck's and a migration's timeouts, and room to start
SKIPPED = {"__pycache__", ".mypy_cache", ".pytest_cache"}


def tree_digest(tree: Path, ran: str, kit: str | None = None) -> str:
    """What the verdicts depend on, as a digest: the kit, the tree's files, its migration, the
    store the self-check ran (its criteria are not asked for) and the Postgres graded on."""
    digest = hashlib.sha256(f"{kit or baseline_key(REPO_ROOT)}\n".encode())
    files = [p for p in sorted(tree.rglob("*")) if p.is_file() and SKIPPED.isdisjoint(p.parts)]
    for path in files:
        digest.update(f"tree/{path.relative_to(tree)}\n".encode() + path.read_bytes())
    for path in migration_files(tree):
        digest.update(f"migration/{path.name}\n".encode() + path.read_bytes())
    digest.update(f"ran:{ran}\npostgres:{server_kind()}\n".encode())
    return digest.hexdigest()


def server_kind() -> str:
    """Which Postgres the grader would grade on here: its own, DATABASE_URL's, or none."""
    try:
        server = chosen_server()
    except ValueError as error:
        return f"refused: {error}"
    kind = grading_place(server)
    return f"url:{hashlib.sha256(server.encode()).hexdigest()}" if server else kind


def kept(digest: str) -> dict[str, Outcome] | None:
    """The verdicts kept for this digest, or None."""
    entry = read_kept().get(digest)
    if not isinstance(entry, dict):
        return None
    try:
        return {key: Outcome(**fields) for key, fields in entry.items()}
    except TypeError:  # written by another version of the kit
        return None


def keep(digest: str, outcomes: dict[str, Outcome]) -> None:
    """Keep the verdicts for this digest, if the grader could give every one of them."""
    if not outcomes or any(o.status not in ("pass", "fail") for o in outcomes.values()):
        return
    entries = read_kept()
    entries.pop(digest, None)
    entries[digest] = {key: fields_of(o) for key, o in outcomes.items()}
    entries = dict(list(entries.items())[-KEPT_AT_MOST:])
    folder = state_dir()
    with contextlib.suppress(OSError):  # only slower next time
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", dir=folder, prefix=".verdicts-", delete=False, encoding="utf-8"
        ) as out:
            json.dump(entries, out)
        os.replace(out.name, folder / KEPT_FILE)


def fields_of(outcome: Outcome) -> dict[str, str]:
    """What the total shows of an outcome: its status and why."""
    return {"status": outcome.status, "message": outcome.message, "output": outcome.output}


def read_kept() -> dict[str, object]:
    """Every kept entry, oldest first ({} when there is none or it cannot be read)."""
    try:
        entries = json.loads((state_dir() / KEPT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return entries if isinstance(entries, dict) else {}


def judge(tree: Path, ran: str) -> dict[str, Outcome]:
    """The outcomes of every criterion but the checks on the store `ran`, from the grader, for
    the tree as it is."""
    from labs.grading.grader import Grader  # the grader's imports, in the process that judges

    grader = Grader(tree, database_url=chosen_server())
    wanted = [c for c in CRITERIA if c.kind != ran]

    def kind_of(kind: str) -> None:  # the grader works a kind out whole on its first criterion
        for criterion in wanted:
            if criterion.kind == kind:
                grader.outcome(criterion)

    # The kinds side by side: mypy, the migration and the checks on Postgres wait on different
    # things, and the learner waits for the slowest, not for their sum.
    kinds = list(dict.fromkeys(c.kind for c in wanted))
    with ThreadPoolExecutor(max_workers=len(kinds) or 1) as pool:
        list(pool.map(kind_of, kinds))
    return {c.key: grader.outcome(c) for c in wanted}


@dataclass
class Pending:
    """The verdicts, either kept from an earlier run or being worked out by a child process."""

    digest: str
    outcomes: dict[str, Outcome] | None = None
    child: subprocess.Popen[str] | None = None

    def result(self) -> dict[str, Outcome]:
        """The verdicts ({} when the child failed: the total then names the commands)."""
        if self.outcomes is not None or self.child is None:
            return self.outcomes or {}
        try:
            out = self.child.communicate(timeout=WAIT_AT_MOST)[0]
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.communicate()
            return {}
        try:
            fields = json.loads(out)
            self.outcomes = {key: Outcome(**entry) for key, entry in fields.items()}
        except (ValueError, TypeError, AttributeError):
            return {}
        return self.outcomes


def start(tree: Path, ran: str = StoreKind.MEMORY) -> Pending:
    """Begin working out the verdicts the self-check on store `ran` lacks, beside its checks
    (or take the kept ones)."""
    kit = baseline_key(REPO_ROOT)  # reads the kit's source: once
    digest = tree_digest(tree, ran, kit)
    outcomes = kept(digest)
    if outcomes is not None:
        return Pending(digest, outcomes)
    if not any(place.is_dir() for place in baseline_places(kit)):
        print(
            _(
                "type-checking the tree for the total: the first time, mypy builds "
                "its cache (a minute at most)"
            ),
            file=sys.stderr,
            flush=True,
        )
    child = subprocess.Popen(
        [sys.executable, "-m", "labs.review.self_total", str(tree), digest, ran],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    return Pending(digest, child=child)


def main(argv: list[str]) -> int:
    """Print the verdicts as JSON, and keep them under the digest given."""
    tree, digest, ran = Path(argv[0]), argv[1], argv[2]
    baseline_cache()  # built once for the kit, as the grader would
    outcomes = judge(tree, ran)
    if tree_digest(tree, ran) == digest:  # not edited while it was judged
        keep(digest, outcomes)
    print(json.dumps({key: fields_of(outcome) for key, outcome in outcomes.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
