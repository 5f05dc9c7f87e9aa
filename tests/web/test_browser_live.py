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
    app = create_app(
        {
            "TESTING": True,
            "DATABASE_URL": None,
            "TREES": {"starter": str(tree_copy)},
            "CHECK_EACH_TIMEOUT": 60.0,  # check 4 waits for the gate, however long it takes
        }
    )
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
    assert page.locator("#checks-poll").get_attribute("data-running") == "yes"
    assert "running: 3 of" in page.locator("#check-summary").inner_text()
    assert page.locator('details[data-check="4"] .mark').inner_text() == "… RUNNING"
    assert page.locator("#run-checks").is_disabled()  # no second press while this one runs
    screenshot(page, "checks-live")
    busy = page.request.post(
        f"{gated_url}/checks/run",
        form={"tree": "starter", "store": "memory"},
        headers={"Origin": gated_url},  # as the page's own form would say
    )
    assert busy.status == 409 and "already going" in busy.text()
    gate.touch()
    page.wait_for_selector('#check-summary[data-state="finished"]', timeout=60_000)
    shown = statuses(page)
    assert {key for key in "123456" if shown[key] == "fail"} == {"3", "4", "5"}
    assert page.locator("#checks-poll").get_attribute("hx-trigger") is None
    assert "3 passed, 3 failed" in page.locator("#check-summary").inner_text()
    page.wait_for_selector("#run-checks:not([disabled])", timeout=10_000)


# What the reader has now: which rows are open, where focus is, how far the page is scrolled,
# and whether the live region is the very element it was (a flag set on it stays).
READER = """() => ({
  open: [...document.querySelectorAll('details.check[open]')].map(d => d.dataset.check),
  focus: document.activeElement && document.activeElement.id,
  scroll: window.scrollY,
  region: document.querySelector('#checks-status').dataset.flag || '',
})"""


def test_live_updates_never_fight_the_reader(browser: Any, gated_url: str, gate: Path) -> None:
    """Rows opened during a run stay open, focus and scroll stay, the live region stays put;
    polls bring no diagram, and a row's diagram comes when it is open."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    tab = context.new_page()
    bodies: list[tuple[str, int, str]] = []
    tab.on("response", lambda r: bodies.append((r.url, r.status, r.text() if r.ok else "")))
    try:
        tab.goto(f"{gated_url}/checks")
        tab.click("#run-checks")
        tab.wait_for_selector('details[data-check="3"][data-status="fail"]', timeout=60_000)
        tab.evaluate("document.querySelector('#checks-status').dataset.flag = 'same'")
        tab.click('details[data-check="3"] summary')
        tab.wait_for_selector('details[data-check="3"] figure.sequence svg')
        tab.click('details[data-check="4"] summary')  # still running: opened, focused
        tab.evaluate("window.scrollTo(0, 200)")
        before = tab.evaluate(READER)
        tab.wait_for_timeout(1500)  # several polls, nothing changes
        assert tab.evaluate(READER) == before
        assert before["open"] == ["3", "4"] and before["focus"] == "check-4-summary"
        gate.touch()
        tab.wait_for_selector('#check-summary[data-state="finished"]', timeout=60_000)
        after = tab.evaluate(READER)
        assert after["open"] == ["3", "4"] and after["focus"] == "check-4-summary"
        assert after["region"] == "same" and abs(after["scroll"] - before["scroll"]) < 2
        tab.wait_for_selector('details[data-check="4"] figure.sequence svg')  # open: fetched
    finally:
        context.close()
    polls = [(status, body) for url, status, body in bodies if "/checks/status" in url]
    assert polls and all("<svg" not in body and len(body) < 20_000 for _status, body in polls)
    assert any(status == 204 for status, _body in polls)  # nothing changed: nothing sent
    drawn = {
        url.split("/checks/diagram/")[1].split("?")[0]
        for url, _s, _b in bodies
        if "/diagram/" in url
    }
    assert drawn == {"3", "4"}  # only the rows opened


def test_back_during_a_run_shows_that_run_and_polls(page: Any, gated_url: str, gate: Path) -> None:
    """Leaving a running page and coming Back shows the run going on, polling, not a stale copy."""
    page.goto(f"{gated_url}/checks")
    page.click("#run-checks")
    page.wait_for_selector('details[data-check="3"][data-status="fail"]', timeout=60_000)
    page.click('nav.views a[href="/runs/starter"]')
    page.wait_for_selector("#runs-live")
    page.go_back()
    page.wait_for_selector('#checks-poll[data-running="yes"][hx-trigger]', state="attached")
    assert page.locator('details[data-check="3"]').get_attribute("data-status") == "fail"
    gate.touch()
    page.wait_for_selector('#check-summary[data-state="finished"]', timeout=60_000)
    page.reload()
    assert "3 passed, 3 failed" in page.locator("#check-summary").inner_text()
