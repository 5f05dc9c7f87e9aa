"""The runs page while the demo executor plays: polls swap rows by id, so the reader keeps the
control they were on and the place they were reading, on a laptop and a phone, in both languages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .browser import SCREENS, browser, serve_dashboard

pytestmark = pytest.mark.browser
__all__ = ["browser"]  # a fixture, imported so pytest finds it
POLLS = 5
# What one poll may weigh while runs move: a few rows and the parts around them, never the
# page of 50 rows (about 80 KB) it was.
POLL_LIMIT = 25_000

WATCH_POLLS = """() => {
  window.polls = [];
  document.addEventListener("htmx:afterSettle", (event) => {
    const focused = document.activeElement;
    const box = focused.getBoundingClientRect();
    window.polls.push({
      url: event.detail.requestConfig ? event.detail.requestConfig.path : "",
      status: event.detail.xhr ? event.detail.xhr.status : 0,
      bytes: event.detail.xhr ? event.detail.xhr.responseText.length : 0,
      focused: focused.id,
      top: box.top,
      scrollY: Math.round(window.scrollY),
      rows: document.querySelectorAll("#runs-body tr").length,
    });
  });
}"""


@pytest.fixture
def dashboard() -> Iterator[str]:
    """A dashboard of its own: the runs it plays are this test's alone."""
    yield from serve_dashboard(None)


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
@pytest.mark.parametrize("screen", list(SCREENS))
def test_five_polls_keep_the_focused_control_and_the_place_on_the_page(
    browser: Any, dashboard: str, screen: str, lang: str
) -> None:
    """With a button in the middle of the table focused and the page scrolled to it, five polls
    that bring changes leave the same button focused at the same place on the screen, and
    each poll carries only what changed."""
    context = browser.new_context(viewport=SCREENS[screen], device_scale_factor=1)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    try:
        tab.goto(f"{dashboard}/runs/starter?lang={lang}")
        tab.fill("#burst-copies", "12")
        tab.click("#burst")  # the starter's bug: twelve runs for one clientMessageId
        tab.wait_for_function("document.querySelectorAll('#runs-body tr').length === 12")
        tab.select_option("#demo-pace", "normal")
        tab.click("#demo-on")
        tab.wait_for_selector('#runs-poll[data-moving="yes"]', state="attached")
        # A pending run in the middle: the executor plays the oldest first, so it moves later.
        middle = tab.locator("#runs-body tr").nth(5)
        button = middle.locator("button.again")
        button.scroll_into_view_if_needed()
        button.focus()
        focused = tab.evaluate("document.activeElement.id")
        assert focused.endswith("-again"), focused
        tab.evaluate(WATCH_POLLS)
        start = tab.evaluate(
            "() => ({top: document.activeElement.getBoundingClientRect().top,"
            " scrollY: Math.round(window.scrollY)})"
        )
        tab.wait_for_function(
            f"window.polls.filter(p => p.status === 200).length >= {POLLS}", timeout=60_000
        )
        polls = [p for p in tab.evaluate("window.polls") if p["status"] == 200][:POLLS]
        for poll in polls:
            assert "since=" in poll["url"], poll  # these are the page's own polls
            assert poll["focused"] == focused, poll
            # The place on the screen is what the reader sees: when rows above change height,
            # the page scrolls by as much, and the control stays put, to within the pixel the
            # page scrolls by (rows may move by a fraction of one; the leftovers never add up).
            assert abs(poll["top"] - start["top"]) < 1, (start, poll)
            assert poll["rows"] == 12, poll
            assert 0 < poll["bytes"] < POLL_LIMIT, poll
    finally:
        context.close()
