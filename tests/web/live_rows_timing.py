"""Measure how soon the checks view shows its first row, and when the last: not a test.

    python -m tests.web.live_rows_timing                 # the starter and the solution on memory
    python -m tests.web.live_rows_timing --postgres      # the solution on a throwaway Postgres too

For each tree and store it presses Run as the page does (a same-origin POST), then polls
the fragment the page polls and prints when the first check row showed and when the run
ended. A POST the dashboard refuses stops the script: it never prints a time it did not see.
"""

from __future__ import annotations

import argparse
import re
import time

from labs.pg.cluster import TempCluster, find_bindir
from labs.pg.scratch import migrate
from web import create_app

# What the page's own requests carry: htmx's header, and the browser's word that the
# request came from the dashboard's page (web/safety/cross_site.py refuses a POST without it).
PAGE = {"HX-Request": "true", "Sec-Fetch-Site": "same-origin"}
ROW = re.compile(r'data-check="\d" data-status="(?:pass|fail)"')
PATIENCE_SECONDS = 120


def measure(tree: str, store: str, database_url: str | None) -> str:
    """Press Run for tree on store, and say when the first row and the last one showed."""
    app = create_app({"TESTING": True, "DATABASE_URL": database_url})
    client = app.test_client()
    try:
        started = time.perf_counter()
        pressed = client.post("/checks/run", data={"tree": tree, "store": store}, headers=PAGE)
        if pressed.status_code >= 300:
            raise SystemExit(f"{tree} on {store}: Run was refused ({pressed.status_code})")
        answered = time.perf_counter() - started
        first = None
        while time.perf_counter() - started < PATIENCE_SECONDS:
            page = client.get(f"/checks?tree={tree}&store={store}", headers=PAGE).text
            if first is None and ROW.search(page):
                first = time.perf_counter() - started
            if 'data-running="no"' in page and first is not None:
                break
            time.sleep(0.02)
        else:
            raise SystemExit(f"{tree} on {store}: the run did not end in {PATIENCE_SECONDS} s")
        last = time.perf_counter() - started
        rows = len(ROW.findall(page))
        return (
            f"{tree} on {store}: POST answered in {answered * 1000:.0f} ms; "
            f"first row after {first:.2f} s; all {rows} rows after {last:.2f} s"
        )
    finally:
        app.extensions["mini_koda_lab"].close()


def main() -> None:
    """Time each tree on memory, and the solution on a migrated throwaway Postgres if asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", action="store_true", help="also the solution on Postgres")
    args = parser.parse_args()
    for tree in ("starter", "solution"):
        print(measure(tree, "memory", None), flush=True)
    if not args.postgres:
        return
    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("--postgres needs the PostgreSQL server binaries (apt install postgresql)")
    cluster = TempCluster(bindir)
    try:
        cluster.start()
        url = cluster.create_database("live_rows_timing")
        migrate(url, "solution")
        print(measure("solution", "postgres", url), flush=True)
    finally:
        cluster.destroy()


if __name__ == "__main__":
    main()
