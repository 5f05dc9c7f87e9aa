"""Check rows arriving live in headless Chromium, on a starter copy whose check 4 waits."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from web import create_app

from .browser import browser, page, screenshot
from .test_live_checks import gate

pytestmark = pytest.mark.browser
__all__ = ["browser", "gate", "page"]  # fixtures, imported so pytest finds them


@pytest.fixture
def gated_url(gate: Path, tree_copy: Path) -> Iterator[str]:
    """A live dashboard whose starter is the gated copy."""
    app = create_app({"TESTING": True, "DATABASE_URL": None, "TREES": {"starter": str(tree_copy)}})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        gate.touch()
        server.shutdown()
        thread.join(timeout=5)
        app.extensions["mini_koda_lab"].close()


def statuses(tab: Any) -> dict[str, str]:
    """Each check row's key and the status it shows now."""
    return dict(
        tab.locator("details.check").evaluate_all(
            "rows => rows.map(r => [r.dataset.check, r.dataset.status])"
        )
    )


def test_rows_appear_in_the_browser_as_each_check_finishes(
    page: Any, gated_url: str, gate: Path
) -> None:
    """Checks 1-3 show their verdicts while 4 runs; opening the gate brings the rest, then stops."""
    page.goto(f"{gated_url}/checks")
    page.click("#run-checks")
    page.wait_for_selector('details[data-check="3"][data-status="fail"]', timeout=60_000)
    shown = statuses(page)
    assert [shown[key] for key in "123456"] == [
        "pass",
        "pass",
        "fail",
        "running",
        "waiting",
        "waiting",
    ]
    assert page.locator("#check-results").get_attribute("data-running") == "yes"
    assert "running: 3 of" in page.locator("#check-summary").inner_text()
    assert page.locator('details[data-check="4"] .mark').inner_text() == "… RUNNING"
    screenshot(page, "checks-live")
    busy = page.request.post(f"{gated_url}/checks/run", form={"tree": "starter", "store": "memory"})
    assert busy.status == 409 and "already going" in busy.text()
    gate.touch()
    page.wait_for_selector('#check-summary[data-state="finished"]', timeout=60_000)
    shown = statuses(page)
    assert {key for key in "123456" if shown[key] == "fail"} == {"3", "4", "5"}
    assert page.locator("#check-results").get_attribute("hx-trigger") is None
    assert "3 passed, 3 failed" in page.locator("#check-summary").inner_text()
