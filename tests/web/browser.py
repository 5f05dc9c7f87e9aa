"""A live dashboard on 127.0.0.1 and headless Chromium to drive it.

Browser tests skip locally when Chromium or playwright is missing (saying
how to enable them) and fail in CI, where a missing browser is a broken setup.
"""

from __future__ import annotations

import io
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from labs.trees.finding import REPO_ROOT
from web import create_app

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = REPO_ROOT / "test-output" / "screenshots"
# The screens a learner uses: a laptop, and a phone held upright.
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENS = {"desktop": DESKTOP, "phone": PHONE}
# The accessibility checker the tests inject into each page (web/static/VERSIONS says which).
AXE = REPO_ROOT / "web" / "static" / "vendor" / "axe.min.js"
# The impacts axe-core calls serious or critical: none may be found on any page.
BLOCKING = ("serious", "critical")
DOCS = REPO_ROOT / "docs"
# The size of the committed screenshots, and of the tabs (so the clip is the whole viewport).
DOCS_CLIP = {"width": 1100, "height": 700}
ENABLE = (
    "browser tests need Chromium at /usr/bin/chromium (apt-get install chromium) "
    "and `pip install playwright`"
)


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
    yield from serve_dashboard(None)


def serve_dashboard(database_url: str | None) -> Iterator[str]:
    """Serve a dashboard on a free loopback port, on Postgres when database_url is given."""
    app = create_app({"TESTING": True, "DEMO_PACE": 0.3, "DATABASE_URL": database_url})
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
        chromium = driver.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh tab the size of a small laptop screen, one device pixel per CSS pixel."""
    context = browser.new_context(viewport=dict(DOCS_CLIP), device_scale_factor=1)
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    try:
        yield tab
    finally:
        context.close()


def run_and_wait(tab: Any, has_text: str = "", timeout: float = 120_000) -> None:
    """Press Run and wait for that run's finished summary (its text holding has_text).

    The summary shown before (an earlier run's) is marked first: Run's answer
    replaces it, so a finished summary without the mark is this run's. Waiting
    for any finished summary could catch the old one before htmx swapped it.
    """
    tab.evaluate("document.querySelector('#check-summary')?.setAttribute('data-before', '')")
    tab.click("#run-checks")
    text = f':has-text("{has_text}")' if has_text else ""
    tab.wait_for_selector(
        f'#check-summary[data-state="finished"]:not([data-before]){text}', timeout=timeout
    )
    # Run is disabled while the run goes on, and comes back with the poll that says it ended.
    tab.wait_for_selector("#run-checks:not([disabled])", timeout=10_000)


def screenshot(
    tab: Any,
    name: str,
    *,
    docs: bool = False,
    docs_from: str = "",
    clip: dict[str, int] = DOCS_CLIP,
) -> Path:
    """Save the whole page to test-output/screenshots.

    With docs and UPDATE_DOCS_SCREENSHOTS=1 (set by `python -m web.screenshots`), also a
    clip-sized part of the page (DOCS_CLIP, or PHONE for a phone's picture) as
    docs/dashboard-<name>.png, what the README shows: from the top, or from the element
    docs_from selects when the point of the picture is lower down. web/screenshots.py lists
    every such name and what it is made from.
    """
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    if docs and os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        tab.evaluate("window.scrollTo(0, 0)")
        box = tab.locator(docs_from).first.bounding_box() if docs_from else None
        top = max(0, int(box["y"]) - 12) if box else 0
        # Near the end of the page, start higher so the picture is a full DOCS_CLIP still.
        height = tab.evaluate("document.documentElement.scrollHeight")
        top = max(0, min(top, height - clip["height"]))
        save_small_png(
            tab.screenshot(full_page=True, clip={"x": 0, "y": top, **clip}),
            DOCS / f"dashboard-{name}.png",
        )
    return path


def save_small_png(png: bytes, path: Path) -> None:
    """Write png as a 256-colour palette PNG: a flat UI loses nothing visible, and the file
    is about a third of Chromium's own encoding."""
    from PIL import Image  # only needed when refreshing the committed screenshots

    image = Image.open(io.BytesIO(png)).convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path.parent.mkdir(exist_ok=True)
    palette.save(path, "PNG", optimize=True)


def overflow(tab: Any) -> dict[str, int]:
    """How wide the page is against its viewport, in CSS px."""
    found: dict[str, int] = tab.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, viewport: window.innerWidth})"
    )
    return found


def blocking_violations(tab: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as it is now, one line each."""
    tab.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = tab.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))"""
    )
    return [
        f"{v['impact']} {v['id']}: {v['help']} at {v['nodes']}"
        for v in found
        if v["impact"] in BLOCKING
    ]
