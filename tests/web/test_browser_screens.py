"""Every page on a laptop and on a phone, in English and in Chinese: never wider than the screen,
legible, and with no serious or critical finding of axe-core."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from .browser import (
    PHONE,
    SCREENS,
    blocking_violations,
    browser,
    live_url,
    overflow,
    screenshot,
)

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_url"]  # fixtures, imported so pytest finds them
HTMX = {"HX-Request": "true"}
LANGUAGES = ["en", "zh_CN"]


def finished(request: Any, url: str, tree: str) -> None:
    """Wait, polling as the page does, until the checks of tree have finished."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        answer = request.get(f"{url}/checks?tree={tree}&store=memory", headers=HTMX)
        if 'data-running="no"' in answer.text():
            return
        time.sleep(0.2)
    raise AssertionError(f"the checks of {tree} never finished")


@pytest.fixture(scope="module")
def benches(browser: Any, live_url: str) -> Iterator[dict[str, str]]:
    """A dashboard in the states the pages are read in: both trees checked, the starter's runs
    table long (6 bursts of 32), a solution run with a refused move and a refused seq."""
    # These requests come from the test, not a page: they say what the page's would.
    context = browser.new_context(extra_http_headers={"Sec-Fetch-Site": "same-origin"})
    request = context.request
    try:
        for tree in ("starter", "solution"):
            request.post(
                f"{live_url}/checks/run", form={"tree": tree, "store": "memory"}, headers=HTMX
            )
            finished(request, live_url, tree)
        for _burst in range(6):
            request.post(
                f"{live_url}/runs/starter/burst",
                form={"message": "double click on send", "copies": "32"},
                headers=HTMX,
            )
        sent = request.post(
            f"{live_url}/runs/solution/send",
            form={"message": "book me a flight to Lisbon", "client_message_id": "screens"},
            headers=HTMX,
        ).text()
        found = re.search(r'<tr data-run="(\w+)"', sent)
        assert found, "the send made a run"
        run_id = found.group(1)
        for action, form in (
            ("advance", {"target": "running"}),
            ("advance", {"target": "done"}),
            ("force", {}),
            ("duplicate-seq", {}),
        ):
            request.post(f"{live_url}/runs/solution/{run_id}/{action}", form=form, headers=HTMX)
        yield {"run": run_id}
    finally:
        context.close()


def open_failures(tab: Any) -> None:
    """Open every failed check row, and wait for its diagram."""
    for key in tab.locator('details.check[data-status="fail"]').evaluate_all(
        "rows => rows.map(r => r.dataset.check)"
    ):
        tab.click(f'details[data-check="{key}"] summary')
        tab.wait_for_selector(f'details[data-check="{key}"] figure.sequence')


PAGES = {
    "checks-starter": "/checks?tree=starter&store=memory",
    "checks-solution": "/checks?tree=solution&store=memory",
    "runs-starter": "/runs/starter",
    "runs-solution": "/runs/solution",
    "run-detail": "/runs/solution/{run}",
    "diff": "/diff",
    "database": "/database",
    "race": "/race",
    "review": "/review",
}


@pytest.fixture(params=list(SCREENS))
def screen(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    """A tab the size of a laptop's screen, or of a phone's."""
    name = str(request.param)
    context = browser.new_context(viewport=SCREENS[name], device_scale_factor=1)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    try:
        yield name, tab
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", list(PAGES))
def test_no_page_is_wider_than_the_screen_and_none_fails_axe(
    screen: tuple[str, Any], benches: dict[str, str], live_url: str, name: str, lang: str
) -> None:
    """document.scrollWidth <= innerWidth with every failure open, and axe-core finds nothing
    serious or critical."""
    width, tab = screen
    path = PAGES[name].format(**benches)
    tab.goto(f"{live_url}{path}{'&' if '?' in path else '?'}lang={lang}")
    if name.startswith("checks"):
        open_failures(tab)
    sizes = overflow(tab)
    assert sizes["scroll"] <= sizes["viewport"], f"{name} ({lang}, {width}): {sizes}"
    assert blocking_violations(tab) == [], f"{name} ({lang}, {width})"
    picture, start = PHONE_PICTURES.get((name, lang), ("", ""))
    if width == "phone":
        shot = picture or f"{name}-{lang}-phone"
        screenshot(tab, shot, docs=bool(picture), docs_from=start, clip=PHONE)


# The phone pictures in docs/ (docs/dashboard-<name>.png), the views in both languages: each
# picture's name, and where on the page it starts ("" for the top).
PHONE_PICTURES = {
    ("checks-starter", "en"): ("phone-checks", "#checks-status"),
    ("checks-starter", "zh_CN"): ("phone-checks-zh", "#checks-status"),
    ("runs-starter", "en"): ("phone-runs", "figure.graph"),
    ("runs-starter", "zh_CN"): ("phone-runs-zh", "#runs-heading"),
    ("run-detail", "en"): ("phone-run-detail", ""),
    ("run-detail", "zh_CN"): ("phone-run-detail-zh", ""),
    ("diff", "en"): ("phone-diff", ""),
    ("review", "zh_CN"): ("phone-review-zh", ""),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_runs_table_and_the_state_graph_stay_legible_on_a_phone(
    browser: Any, benches: dict[str, str], live_url: str, lang: str
) -> None:
    """On a phone the input column keeps whole words, and the graph's text stays at least 11 px
    (the graph scrolls within its own box, never the page)."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=1)
    tab = context.new_page()
    try:
        tab.goto(f"{live_url}/runs/starter?lang={lang}")
        widths = tab.locator("td.input").evaluate_all(
            "cells => cells.map(c => c.getBoundingClientRect().width)"
        )
        assert widths and min(widths) >= 64, widths  # eight characters or more a line
        sizes = tab.locator("figure.graph svg text").evaluate_all(
            """texts => texts.map(t => {
                 const svg = t.ownerSVGElement;
                 const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
                 return parseFloat(getComputedStyle(t).fontSize) * scale;
               })"""
        )
        assert sizes and min(sizes) >= 11, min(sizes)
        box = tab.locator("figure.graph .picture").evaluate(
            "b => ({scroll: b.scrollWidth, client: b.clientWidth})"
        )
        assert box["scroll"] > box["client"]  # it scrolls inside its box
        assert overflow(tab)["scroll"] <= PHONE["width"]
        height = tab.evaluate("document.documentElement.scrollHeight")
        assert height < 16_000, height  # 50 rows a page (each a duplicate, with its link), not 193
    finally:
        context.close()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_reviews_first_visit_runs_nothing_and_offers_verify(
    screen: tuple[str, Any], live_url: str, lang: str
) -> None:
    """Opening Review posts nothing: the checklist waits, a visible Verify button in reach."""
    width, tab = screen
    posts: list[str] = []
    tab.on("request", lambda sent: posts.append(sent.url) if sent.method == "POST" else None)
    tab.goto(f"{live_url}/review?lang={lang}")
    tab.wait_for_load_state("networkidle")
    assert posts == [], f"{width}, {lang}: {posts}"
    assert tab.locator("#checklist-unverified").is_visible()  # nothing in this module verifies
    button = tab.locator("#verify-checklist")
    assert button.is_visible() and button.is_enabled()
    box = button.bounding_box()
    assert box is not None and box["x"] + box["width"] <= tab.viewport_size["width"]


FIRST_MARK = ".arrow.replay line, .arrow.refused line, .arrow.error line, .arrow.through line"
# Where every cell of the tables a phone shows as cards ends, and the screen's width.
CELLS_INSIDE = """selector => {
  const cells = [...document.querySelectorAll(selector)].filter(c => c.offsetParent !== null);
  return {count: cells.length, width: window.innerWidth,
          right: Math.max(0, ...cells.map(c => c.getBoundingClientRect().right))};
}"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_on_a_phone_the_failing_step_and_every_outcome_are_on_the_screen(
    browser: Any, benches: dict[str, str], live_url: str, lang: str
) -> None:
    """A failed check's diagram opens at its first marked step, its steps table is cards with the
    mark first, and the attempts and moves tables are cards: nothing needs a sideways scroll."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=1)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    try:
        tab.goto(f"{live_url}/checks?tree=starter&store=memory&lang={lang}")
        tab.click('details[data-check="3"] summary')
        tab.wait_for_selector('details[data-check="3"] figure.sequence')
        tab.wait_for_function(
            "() => document.querySelector('details[data-check=\"3\"] .picture').scrollLeft > 0"
        )
        mark = tab.locator(f'details[data-check="3"] figure.sequence :is({FIRST_MARK})').first
        box = mark.bounding_box()
        assert box is not None and 0 <= box["x"] < PHONE["width"] - 40, box
        tab.click('details[data-check="3"] details.steps summary')
        plain = ':not([data-kind="call"], [data-kind="ok"])'
        marked = tab.locator(f'details[data-check="3"] .steps-table tbody tr{plain}')
        first_cells = marked.first.locator("td").evaluate_all(
            "cells => cells.map(c => c.className)"
        )
        assert first_cells[0] == "mark-cell", first_cells
        steps = tab.evaluate(CELLS_INSIDE, 'details[data-check="3"] .steps-table td')
        assert steps["count"] and steps["right"] <= steps["width"], steps
        assert overflow(tab)["scroll"] <= PHONE["width"]
        tab.goto(f"{live_url}/runs/solution?lang={lang}")
        tab.click("#graph-tables summary")
        for table in ("table.timeline", "table.graph-edges", "table.graph-states"):
            cells = tab.evaluate(CELLS_INSIDE, f"{table} td")
            assert cells["count"] and cells["right"] <= cells["width"], (table, cells)
        outcome = tab.locator("table.timeline td[data-label] .tag").first
        assert outcome.is_visible()
        assert overflow(tab)["scroll"] <= PHONE["width"]
    finally:
        context.close()
