"""The dashboard's language in headless Chromium: chosen by the browser or by a link, and
Chinese drawn in a font that has it.

What a page says in each language is tested with the page, in test_browser.py.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from labs.review import texts

from .browser import DOCS_CLIP, browser, live_url, page, run_and_wait, screenshot

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_url", "page"]  # fixtures, imported so pytest finds them


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review answers and marks go to a state folder of this test's own."""
    monkeypatch.setenv("LAB_STATE_DIR", str(tmp_path / "state"))


def test_a_chinese_browser_gets_the_checks_in_chinese(browser: Any, live_url: str) -> None:
    """Accept-Language zh-CN: the navigation, the check titles and expected/got are Chinese."""
    context = browser.new_context(
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN"},
        viewport=dict(DOCS_CLIP),  # the picture is the whole width of the page
        device_scale_factor=1,
    )
    tab = context.new_page()
    try:
        tab.goto(f"{live_url}/checks")
        assert tab.locator("html").get_attribute("lang") == "zh-CN"
        assert "自检" in tab.inner_text("nav.views")
        tab.check('input[name="tree"][value="starter"]')
        run_and_wait(tab)
        assert "网关接收" in tab.inner_text('details[data-check="1"]')
        tab.click('details[data-check="4"] summary')
        assert "抛出 IllegalTransitionError" in tab.inner_text('details[data-check="4"]')
        screenshot(tab, "checks-zh", docs=True)
    finally:
        context.close()


def test_the_language_link_switches_and_is_remembered(page: Any, live_url: str) -> None:
    """An English browser follows the 简体中文 link; the Review page then asks in Chinese."""
    page.goto(f"{live_url}/review")
    assert page.locator("html").get_attribute("lang") == "en"
    page.click("text=简体中文")
    page.wait_for_selector("html[lang='zh-CN']")
    page.goto(f"{live_url}/review")  # no ?lang= any more: the choice is remembered
    question = texts.load("questions", "zh_CN")["question"][0]["question"]
    assert question in page.inner_text("main")
    page.click("text=English")
    page.wait_for_selector("html[lang='en']")


# Draws one character on a canvas in the page's own font and returns its pixels.
DRAWN = """(character) => {
    const canvas = document.createElement("canvas");
    canvas.width = 40;
    canvas.height = 40;
    const pen = canvas.getContext("2d");
    pen.font = "32px " + getComputedStyle(document.body).fontFamily;
    pen.fillText(character, 4, 32);
    return Array.from(pen.getImageData(0, 0, 40, 40).data).join(",");
}"""


def test_chinese_is_drawn_in_a_font_that_has_it_not_as_boxes(page: Any, live_url: str) -> None:
    """Two different Chinese characters come out different and unlike a character no font
    has: without a font covering Chinese, every one is the same empty box."""
    page.goto(f"{live_url}/checks?lang=zh_Hans_CN")
    first, second, nowhere = (
        hashlib.sha256(page.evaluate(DRAWN, c).encode()).hexdigest()[:12]
        for c in ("中", "检", "\U0010fffd")
    )
    assert first != second and nowhere not in (first, second), (
        "no font covering Chinese: install fonts-wqy-zenhei (.ci/run does)"
    )
