"""python -m web.screenshots: make every picture in docs/ from the current dashboard.

The pictures are taken by the browser tests (headless Chromium, a throwaway
Postgres for the database and race views) with UPDATE_DOCS_SCREENSHOTS=1.
Afterwards a manifest, docs/screenshots.json, records a hash of every file
each picture was made from: templates, CSS, the views' code, the checks and
the trees they show, the test that drove the browser. A fast test compares
the manifest with the files as they are now, so a picture cannot go stale
silently: change what it shows, and the test names the picture and the
file, and says to run this command.

    python -m web.screenshots           # make them all, then write the manifest
    python -m web.screenshots --check   # only say which pictures are stale (exit 1 if any)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from labs.trees.api import REPO_ROOT

COMMAND = "python -m web.screenshots"
MANIFEST = Path("docs/screenshots.json")
# The browser tests that take the pictures (each calls screenshot(..., docs=True)).
BROWSER_TESTS = [
    "tests/web/test_browser.py",
    "tests/web/test_browser_postgres.py",
    "tests/web/test_browser_languages.py",
    "tests/web/test_browser_screens.py",
]

# What every picture is made from: the page around it, and the code that serves and drives it.
COMMON = [
    "web/templates/base.html",
    "web/static/dashboard.css",
    "web/static/dashboard.js",
    "web/rendering/fragments.py",
    "web/app.py",
    "web/i18n.py",
    "tests/web/browser.py",
]
CHECKS = [
    "web/templates/checks.html",
    "web/templates/partials/check_*.html",
    "web/templates/partials/sequence.html",
    "web/checkruns/rows.py",
    "web/checkruns/check_run.py",
    "web/checkruns/run_hosts.py",
    "web/checkruns/phrases.py",
    "web/rendering/sequence.py",
    "web/views/checks.py",
    "labs/checking/checks/*.py",
    "labs/checking/marks.py",
    "labs/checking/extra.py",
    "labs/checking/context.py",
    "labs/checking/definition.py",
    "labs/checking/hints.py",
    "labs/checking/report.py",
    "labs/checking/runner.py",
    "labs/checking/trace.py",
    "tests/web/test_browser.py",
]
RUNS = [
    "web/templates/runs.html",
    "web/templates/partials/runs_live.html",
    "web/templates/partials/state_graph.html",
    "web/templates/partials/timeline.html",
    "web/workbench/workbench.py",
    "web/workbench/demo_executor.py",
    "web/workbench/gateway_client.py",
    "web/workbench/journal.py",
    "web/workbench/moves.py",
    "web/workbench/outcome.py",
    "web/workbench/remote_store.py",
    "web/workbench/sent_runs.py",
    "web/workbench/tree_link.py",
    "web/rendering/state_graph.py",
    "web/views/runs.py",
    "web/views/run_actions.py",
    "tests/web/test_browser.py",
]
POSTGRES = ["tests/web/test_browser_postgres.py", "tests/web/conftest.py"]
# The pictures at a phone's width are taken by the test that loads every page on each screen.
SCREENS = "tests/web/test_browser_screens.py"
CHINESE = ["labs/locale/zh_Hans_CN/LC_MESSAGES/lab.po", "tests/web/test_browser_languages.py"]
RUN_DETAIL = [
    "web/templates/run.html",
    "web/templates/partials/run_body.html",
    "web/rendering/strip.py",
    "web/views/run_detail.py",
]
DIFF = [
    "web/templates/diff.html",
    "web/templates/partials/diff_hunks.html",
    "web/views/diff.py",
    "labs/trees/diff.py",
    "labs/trees/regions.py",
]
DATABASE = [
    "web/templates/database.html",
    "web/templates/partials/database_body.html",
    "web/views/database.py",
    "labs/pg/catalog.py",
    "migrations/versions/solution/*.py",
    "solution/shared/schema.py",
    "starter/shared/schema.py",
]
RACE = [
    "web/templates/race.html",
    "web/templates/partials/race_result.html",
    "web/views/race.py",
    "labs/lesson/race.py",
]
REVIEW = [
    "web/templates/review.html",
    "web/templates/partials/review_*.html",
    "web/views/review.py",
    "labs/review/*.py",
    "labs/review/*.toml",
]


def tree(name: str) -> list[str]:
    """Every Python file of a tree: its texts, hints and errors show up in the pictures."""
    return [f"{name}/**/*.py"]


# Picture name (docs/dashboard-<name>.png) -> the files, or glob patterns, it is made from.
SHOTS: dict[str, list[str]] = {
    "checks-starter": [*CHECKS, *tree("starter")],
    "checks-diagram": [*CHECKS, *tree("solution")],
    "checks-went-through": [*CHECKS, *tree("starter")],
    "checks-zh": [*CHECKS, *tree("starter"), "labs/term/i18n.py", *CHINESE],
    "runs-refused": [*RUNS, *tree("solution")],
    "runs-live": [*RUNS, *tree("starter")],
    "run-detail": [*RUNS, *RUN_DETAIL, *tree("starter")],
    "diff": [*DIFF, "tests/web/test_browser.py", *tree("starter"), *tree("solution")],
    "database": [*DATABASE, *POSTGRES],
    "race": [*RACE, *POSTGRES],
    "runs-zh": [*RUNS, *CHINESE, *tree("solution")],
    "phone-checks": [*CHECKS, SCREENS, *tree("starter")],
    "phone-checks-zh": [*CHECKS, *CHINESE, SCREENS, *tree("starter")],
    "phone-runs": [*RUNS, SCREENS, *tree("starter")],
    "phone-runs-zh": [*RUNS, *CHINESE, SCREENS, *tree("starter")],
    "phone-run-detail": [*RUNS, *RUN_DETAIL, SCREENS, *tree("solution")],
    "phone-run-detail-zh": [*RUNS, *RUN_DETAIL, *CHINESE, SCREENS, *tree("solution")],
    "phone-diff": [*DIFF, SCREENS, *tree("starter"), *tree("solution")],
    "phone-review-zh": [*REVIEW, *CHINESE, SCREENS],
    "phone-database": [*DATABASE, *POSTGRES],
    "phone-race": [*RACE, *POSTGRES],
}


def phone(name: str) -> bool:
    """Whether a picture is taken at a phone's width (its size is then the phone's screen)."""
    return name.startswith("phone-")


def picture(name: str, root: Path = REPO_ROOT) -> Path:
    """Where a picture is kept."""
    return root / "docs" / f"dashboard-{name}.png"


def sources(patterns: Iterable[str], root: Path = REPO_ROOT) -> list[str]:
    """The files the patterns name under root, as sorted relative paths (caches left out)."""
    found: set[str] = set()
    for pattern in [*COMMON, *patterns]:
        for path in root.glob(pattern):
            if path.is_file() and "__pycache__" not in path.parts:
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


def digest(path: Path) -> str:
    """The sha256 of a file's bytes, line endings made alike (a Windows checkout is no change)."""
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def manifest(root: Path = REPO_ROOT, shots: dict[str, list[str]] = SHOTS) -> dict[str, object]:
    """What each picture is made from now: per picture its files, and each file's hash."""
    per_shot = {name: sources(patterns, root) for name, patterns in shots.items()}
    files = sorted({path for paths in per_shot.values() for path in paths})
    return {
        "command": COMMAND,
        "shots": per_shot,
        "sources": {path: digest(root / path) for path in files},
    }


def stale(root: Path = REPO_ROOT, shots: dict[str, list[str]] = SHOTS) -> dict[str, list[str]]:
    """Per picture made from something that changed since: what changed (empty when fresh)."""
    path = root / MANIFEST
    if not path.exists():
        return {name: [f"{MANIFEST} is missing"] for name in shots}
    recorded = json.loads(path.read_text(encoding="utf-8"))
    now = manifest(root, shots)
    was_files: dict[str, str] = recorded.get("sources", {})
    now_files: dict[str, str] = now["sources"]  # type: ignore[assignment]
    found: dict[str, list[str]] = {}
    for name, paths in now["shots"].items():  # type: ignore[attr-defined]
        before = recorded.get("shots", {}).get(name)
        if before is None:
            found[name] = ["never made"]
            continue
        changed = [p for p in paths if was_files.get(p) != now_files[p] and p in before]
        changed += [f"{p} (new)" for p in paths if p not in before]
        changed += [f"{p} (removed)" for p in before if p not in paths]
        if not picture(name, root).exists():
            changed.append(f"{picture(name, root).relative_to(root)} is missing")
        if changed:
            found[name] = changed
    return found


def make_all() -> int:
    """Run the browser tests with the docs pictures switched on, then write the manifest."""
    started = time.time()
    env = {**os.environ, "UPDATE_DOCS_SCREENSHOTS": "1", "CI": "true"}  # a skip is a failure
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *BROWSER_TESTS],
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        print("the browser tests failed: no manifest written", file=sys.stderr)
        return 1
    old = [name for name in SHOTS if picture(name).stat().st_mtime < started]
    if old:
        print(f"not taken by the browser tests: {', '.join(old)}", file=sys.stderr)
        return 1
    (REPO_ROOT / MANIFEST).write_text(json.dumps(manifest(), indent=1) + "\n", encoding="utf-8")
    print(f"{len(SHOTS)} pictures in docs/, made from the current sources: {MANIFEST} updated")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Make the pictures, or with --check only list the stale ones."""
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="list the stale pictures; exit 1 if there are any"
    )
    args = parser.parse_args(argv)
    if not args.check:
        return make_all()
    found = stale()
    for name, changed in found.items():
        print(f"docs/dashboard-{name}.png is stale: {', '.join(changed)}")
    if found:
        print(f"run `{COMMAND}` to make them again")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
