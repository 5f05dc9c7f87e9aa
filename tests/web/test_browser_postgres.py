"""The Postgres-only views in headless Chromium: the database catalog and the race."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .browser import (
    PHONE,
    SCREENS,
    blocking_violations,
    browser,
    overflow,
    page,
    screenshot,
    serve_dashboard,
)

pytestmark = [pytest.mark.browser, pytest.mark.postgres]
__all__ = ["browser", "page"]  # fixtures, imported so pytest finds them


@pytest.fixture
def postgres_url(both_trees_database: str) -> Iterator[str]:
    """A live dashboard on a throwaway Postgres: solution migrated, starter from its own schema."""
    yield from serve_dashboard(both_trees_database)


def requirements(tab: Any, tree: str) -> dict[str, str]:
    """Per check, whether the tree's section shows its required uniqueness as present."""
    items = tab.locator(f'article.schema[data-tree="{tree}"] li.requirement')
    return {
        items.nth(i).get_attribute("data-check"): items.nth(i).get_attribute("data-present")
        for i in range(items.count())
    }


def test_the_database_view_shows_both_constraints_on_the_solution_only(
    page: Any, postgres_url: str
) -> None:
    """The solution's section marks checks 3 and 5 present; the unfixed starter's, missing."""
    page.goto(f"{postgres_url}/database")
    assert requirements(page, "solution") == {"3": "yes", "5": "yes"}
    assert requirements(page, "starter") == {"3": "no", "5": "no"}
    starter = page.locator('article.schema[data-tree="starter"]').inner_text()
    assert "TODO(check 3)" in starter and "TODO(check 5)" in starter
    screenshot(page, "database", docs=True, docs_from='article.schema[data-tree="solution"]')


def test_a_small_race_duplicates_on_the_naive_path_and_not_under_the_constraint(
    page: Any, postgres_url: str
) -> None:
    """Six racers with a 40 ms window: the naive path leaves several rows, the constraint one."""
    page.goto(f"{postgres_url}/race")
    page.fill("#race-requests", "6")
    page.fill("#race-delay", "40")
    page.click("#run-race")
    page.wait_for_selector("#race-result td.verdict", timeout=60_000)
    duplicated = page.locator("td.verdict.duplicated")
    assert duplicated.count() == 1 and int(duplicated.get_attribute("data-rows")) > 1
    assert "duplicate row" in duplicated.inner_text()
    guarded = page.locator("td.verdict.one-row")
    assert guarded.count() == 1 and guarded.get_attribute("data-rows") == "1"
    assert "one row, no duplicates" in guarded.inner_text()
    screenshot(page, "race", docs=True)


def test_the_catalog_and_the_race_fit_every_screen_and_pass_axe(
    browser: Any, postgres_url: str
) -> None:
    """The database catalog and a race's outcome, on a laptop and a phone, in English and
    Chinese: never wider than the screen, nothing serious or critical for axe-core."""
    for width, viewport in SCREENS.items():
        context = browser.new_context(viewport=viewport, device_scale_factor=1)
        tab = context.new_page()
        try:
            for lang in ("en", "zh_CN"):
                for path in ("/database", "/race"):
                    tab.goto(f"{postgres_url}{path}?lang={lang}")
                    if path == "/race":  # the form's own answer: the outcome table
                        tab.fill("#race-requests", "6")
                        tab.click("#run-race")
                        tab.wait_for_selector("#race-result td.verdict", timeout=60_000)
                    where = f"{path} ({lang}, {width})"
                    sizes = overflow(tab)
                    assert sizes["scroll"] <= sizes["viewport"], f"{where}: {sizes}"
                    assert blocking_violations(tab) == [], where
                    if width == "phone" and lang == "en":
                        name = f"phone-{path.strip('/')}"
                        screenshot(tab, name, docs=True, clip=PHONE)
        finally:
            context.close()
