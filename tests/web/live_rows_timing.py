"""Measure how soon the checks view shows its first row, and when the last: not a test.

    python -m tests.web.live_rows_timing

Prints the time the POST takes to answer, then when the first check row and the whole
run show up in the fragment the page polls (the memory store, the starter).
"""

from __future__ import annotations

import re
import time

from web import create_app

HTMX = {"HX-Request": "true"}


def main() -> None:
    """Start one run and poll its fragment as the page does, timing what it shows."""
    app = create_app({"TESTING": True, "DATABASE_URL": None})
    client = app.test_client()
    started = time.perf_counter()
    client.post("/checks/run", data={"tree": "starter", "store": "memory"}, headers=HTMX)
    answered = time.perf_counter() - started
    first = None
    try:
        while time.perf_counter() - started < 120:
            page = client.get("/checks?tree=starter&store=memory", headers=HTMX).text
            if first is None and re.search(r'data-status="(pass|fail)"', page):
                first = time.perf_counter() - started
            if 'data-running="no"' in page:
                break
            time.sleep(0.02)
        whole = time.perf_counter() - started
        print(
            f"POST answered in {answered * 1000:.0f} ms; "
            f"first row after {first or 0:.2f} s; every row after {whole:.2f} s"
        )
    finally:
        app.extensions["mini_koda_lab"].close()


if __name__ == "__main__":
    main()
