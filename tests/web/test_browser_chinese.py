"""The dashboard in Simplified Chinese, in headless Chromium: chosen by the browser or by a link."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from labs.review import texts

from .browser import browser, live_url, page, screenshot

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_url", "page"]  # fixtures, imported so pytest finds them


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review answers and marks go to a state folder of this test's own."""
    monkeypatch.setenv("LAB_STATE_DIR", str(tmp_path / "state"))


def test_a_chinese_browser_gets_the_checks_in_chinese(browser: Any, live_url: str) -> None:
    """Accept-Language zh-CN: the navigation, the check titles and expected/got are Chinese."""
    context = browser.new_context(locale="zh-CN", extra_http_headers={"Accept-Language": "zh-CN"})
    tab = context.new_page()
    try:
        tab.goto(f"{live_url}/checks")
        assert tab.locator("html").get_attribute("lang") == "zh-CN"
        assert "自检" in tab.inner_text("nav.views")
        tab.check('input[name="tree"][value="starter"]')
        tab.click("#run-checks")
        tab.wait_for_selector('#check-summary[data-state="finished"]', timeout=120_000)
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
