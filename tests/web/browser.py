"""A live dashboard on 127.0.0.1 and headless Chromium to drive it.

Browser tests skip locally when Chromium or playwright is missing (saying
how to enable them) and fail in CI, where a missing browser is a broken setup.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from labs.trees import REPO_ROOT
from web import create_app

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SHOTS = REPO_ROOT / "test-output" / "screenshots"
DOCS = REPO_ROOT / "docs"
ENABLE = ("browser tests need Chromium at /usr/bin/chromium (apt-get install chromium) "
          "and `pip install playwright`")


def missing_browser() -> str:
    """Why the browser tests cannot run here, or an empty string."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not CHROMIUM.exists() and not shutil.which(str(CHROMIUM)):
        return f"{CHROMIUM} does not exist"
    return ""


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    """Serve a dashboard (fast demo pace) on a free loopback port for the module's tests."""
    app = create_app({"TESTING": True, "DEMO_PACE": 0.3, "DATABASE_URL": None})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)
        app.extensions["mini_koda_lab"].close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through playwright's sync API."""
    why = missing_browser()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"{why}: in CI the browser tests must run. {ENABLE}")
        pytest.skip(f"{why}; {ENABLE}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                          args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab the size of a laptop screen."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    try:
        yield tab
    finally:
        context.close()


def screenshot(tab: Any, name: str, *, docs: bool = False) -> Path:
    """Save the page to test-output/screenshots; with docs, also a small PNG under docs/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    if docs and os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        DOCS.mkdir(exist_ok=True)
        tab.screenshot(path=str(DOCS / f"dashboard-{name}.png"), full_page=False)
    return path
