"""The dashboard in headless Chromium: what a learner sees and clicks."""

from __future__ import annotations

import contextlib
import re
from typing import Any

import pytest

from labs.term import i18n
from tests.support.languages import LANGUAGES, worded

from .browser import browser, live_url, page, run_and_wait, screenshot

pytestmark = pytest.mark.browser
__all__ = ["browser", "live_url", "page"]  # fixtures, imported so pytest finds them


def run_checks(tab: Any, url: str, tree: str) -> dict[str, str]:
    """Choose a tree, press Run, wait for the rows; return each check's shown status."""
    tab.goto(f"{url}/checks")
    radio = tab.locator(f'input[name="tree"][value="{tree}"]')
    if not radio.is_checked():  # choosing a tree fetches its results: let that land first
        with tab.expect_response(lambda answer: "/checks?" in answer.url):
            radio.check()
    run_and_wait(tab, tree)
    rows = tab.locator("details.check")
    return {
        rows.nth(i).get_attribute("data-check"): rows.nth(i).get_attribute("data-status")
        for i in range(rows.count())
    }


def test_the_starter_shows_exactly_checks_3_4_5_red(page: Any, live_url: str) -> None:
    """Running the starter's checks shows 3, 4 and 5 failed, and a diagram opens on click."""
    shown = run_checks(page, live_url, "starter")
    assert {k for k, v in shown.items() if k.isdigit() and v == "fail"} == {"3", "4", "5"}
    assert page.locator('details[data-check="3"] .mark').inner_text() == "✗ FAIL"
    page.click('details[data-check="3"] summary')
    diagram = page.wait_for_selector('details[data-check="3"] figure.sequence svg')
    assert diagram.is_visible()  # fetched when the row was opened
    screenshot(page, "checks-starter", docs=True)
    page.click('details[data-check="3"] summary')  # closed again
    page.click('details[data-check="4"] summary')
    forbidden = page.wait_for_selector('details[data-check="4"] g.arrow.through')
    assert "WENT THROUGH" in forbidden.inner_html()
    screenshot(page, "checks-went-through", docs=True, docs_from='details[data-check="4"]')


def test_the_solution_shows_six_green(page: Any, live_url: str) -> None:
    """Running the solution's checks shows all six passed and a replay in check 3's diagram."""
    shown = run_checks(page, live_url, "solution")
    assert [shown[str(n)] for n in range(1, 7)] == ["pass"] * 6
    assert "6 passed, 0 failed" in page.locator("#check-summary").inner_text()
    page.click('details[data-check="3"] summary')
    replay = page.locator('details[data-check="3"] g.arrow.replay').first
    assert "REPLAY" in replay.inner_html()
    screenshot(page, "checks-solution")


def send(tab: Any, client_id: str, *, fail: bool = False) -> str:
    """Send a message from the runs form; return the id of the run it made or found."""
    tab.fill("#send-client-id", client_id)
    if fail:
        tab.check("#send-fail")
    before = tab.locator("#last-outcome").all_inner_texts()
    tab.click("#send")
    # Wait for this answer, not the last one: in these tests each send changes the sentence.
    # htmx gives the new outcome its own attributes (its tone) only once it has settled, when
    # it takes htmx-added away.
    tab.wait_for_function(
        """before => {
          const now = document.querySelector('#last-outcome');
          return now && now.innerText.includes('202') && now.innerText !== (before[0] || '')
            && !now.classList.contains('htmx-added');
        }""",
        arg=before,
    )
    # The run's id is the first 26-letter id the sentence names, in every language.
    found = re.search(r"\b([0-9A-Z]{26})\b", tab.locator("#last-outcome").inner_text())
    assert found, "the outcome names the run"
    return found.group(1)


def test_a_duplicate_gets_the_same_run_id(page: Any, live_url: str) -> None:
    """On the solution, sending the same clientMessageId again shows the same run id."""
    page.goto(f"{live_url}/runs/solution")
    run_id = send(page, "dup-1")
    page.click(f'tr[data-run="{run_id}"] button.again')
    page.wait_for_selector(f'#last-outcome:has-text("same run id {run_id}")')
    assert page.locator(f'tr[data-run="{run_id}"]').count() == 1
    screenshot(page, "runs-duplicate")


# The docs picture of the refusal, in each language.
REFUSAL_PICTURES = {i18n.ENGLISH: "runs-refused", i18n.CHINESE: "runs-zh"}


@pytest.mark.parametrize("language", LANGUAGES)
def test_force_done_to_running_is_refused_on_the_solution(
    page: Any, live_url: str, language: str
) -> None:
    """A done run forced back to running stays done, the refusal is shown in red text, and the
    graph and its table count it, all in the page's language."""
    page.goto(f"{live_url}/runs/solution?lang={language}")
    run_id = send(page, f"force-{language}")
    row = f'tr[data-run="{run_id}"]'
    page.click(f'{row} button.move[data-target="running"]')
    page.wait_for_selector(f'{row}[data-status="running"]')
    page.click(f'{row} button.move[data-target="done"]')
    page.wait_for_selector(f'{row}[data-status="done"]')
    # The bench is the module's: the other language's case may have been refused before. A
    # forbidden move has its row in the table once it has been tried.
    edge = '#graph-tables tr[data-edge="done-running"] td'
    before = page.locator(edge).all_text_contents()
    refusals = (int(before[3]) if before else 0) + 1
    page.click(f"{row} button.force")
    page.wait_for_selector("#last-outcome.refused")
    assert worded(language, "REFUSED") in page.locator("#last-outcome").inner_text()
    assert page.locator(row).get_attribute("data-status") == "done"
    counted = worded(language, "✗ refused ×{count}").format(count=refusals)
    assert counted in page.locator('g[data-edge="done-running"]').inner_html()
    page.click("#graph-tables summary")
    shown = page.locator(edge).all_inner_texts()
    assert shown[1:] == [worded(language, "no"), "0", str(refusals), "0"], shown
    screenshot(page, REFUSAL_PICTURES[language], docs=True, docs_from="#last-outcome")


def test_a_demo_run_reaches_done_with_its_messages_in_order(page: Any, live_url: str) -> None:
    """With the demo executor on, the row turns done live and the strip reads seq 0..n."""
    page.goto(f"{live_url}/runs/starter")
    page.select_option("#demo-pace", "normal")
    page.click("#demo-on")
    page.wait_for_selector('#executor-state:has-text("on")')
    run_id = send(page, "demo-1")
    page.wait_for_selector(f'tr[data-run="{run_id}"][data-status="streaming"]')
    screenshot(page, "runs-live", docs=True, docs_from="#last-outcome")
    page.wait_for_selector(f'tr[data-run="{run_id}"][data-status="done"]', timeout=30_000)
    page.wait_for_selector('#runs-poll[data-moving="no"]', state="attached")
    page.click(f'tr[data-run="{run_id}"] a')
    page.wait_for_selector('#run-status:has-text("done")')
    seqs = [
        int(s)
        for s in page.locator(".strip .cell.message").evaluate_all(
            "cells => cells.map(c => c.dataset.seq)"
        )
    ]
    assert seqs == list(range(len(seqs))) and len(seqs) > 2
    screenshot(page, "run-detail", docs=True)
    page.goto(f"{live_url}/runs/starter")
    page.click("#demo-off")
    page.wait_for_selector('#executor-state:has-text("off")')


def test_the_diff_and_database_views_render(page: Any, live_url: str) -> None:
    """The diff shows hunks under checks 3, 4 and 5; the database view explains its absence."""
    page.goto(f"{live_url}/diff")
    assert page.locator("article.diff-check").count() >= 3
    screenshot(page, "diff", docs=True)
    page.goto(f"{live_url}/database")
    assert page.locator("#no-database").is_visible()
    screenshot(page, "database-unconfigured")


def test_a_refused_message_card_keeps_its_run_id_inside_the_box(page: Any, live_url: str) -> None:
    """On the run page, the REFUSED card's text (a 26-letter run id) wraps within the card."""
    page.goto(f"{live_url}/runs/solution")
    run_id = send(page, "wrap-1")
    page.click(f'tr[data-run="{run_id}"] button.dupseq')
    page.wait_for_selector('#last-outcome:has-text("REFUSED")')
    page.goto(f"{live_url}/runs/solution/{run_id}")
    card = page.locator(".strip .cell.refused")
    assert run_id in card.inner_text()
    overflowing = page.locator(".strip .cell, .strip .cell *").evaluate_all(
        "cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1).length"
    )
    assert overflowing == 0


# For each label of an open diagram: its text, its tooltip, and whether its box lies inside the
# SVG's box and inside the row that holds the figure (the panel the learner sees).
LABEL_BOXES = """figure => {
  const svg = figure.querySelector('svg').getBoundingClientRect();
  const panel = figure.closest('details').getBoundingClientRect();
  const inside = (r, o) => r.left >= o.left - 0.5 && r.right <= o.right + 0.5
    && r.top >= o.top - 0.5 && r.bottom <= o.bottom + 0.5;
  return [...figure.querySelectorAll('g.arrow')].map(g => {
    const text = g.querySelector('text.label');
    const box = text.getBoundingClientRect();
    return {
      kind: g.classList[1],
      text: [...text.querySelectorAll('tspan')].map(t => t.textContent).join(' '),
      title: g.querySelector('title').textContent.replace(/^\\d+\\. /, ''),
      in_svg: inside(box, svg),
      in_panel: inside(box, panel),
    };
  });
}"""


# For each legend entry of an open diagram: its words, and whether they lie inside the SVG.
LEGEND_BOXES = """figure => {
  const svg = figure.querySelector('svg').getBoundingClientRect();
  return [...figure.querySelectorAll('text.legend-text')].map(text => {
    const box = text.getBoundingClientRect();
    return {
      text: text.textContent,
      in_svg: box.left >= svg.left - 0.5 && box.right <= svg.right + 0.5,
    };
  });
}"""


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("check", "reason"), [("4", "done"), ("5", "DuplicateMessageError")])
def test_a_refusal_reason_is_readable_whole_in_the_diagram(
    page: Any, live_url: str, check: str, reason: str, lang: str
) -> None:
    """Every label, the refusal's reason included, is drawn whole and inside the picture.

    In Chinese too, where the tags and the legend are Chinese (a character two columns wide).
    """
    page.goto(f"{live_url}/checks?tree=solution&store=memory&lang={lang}")
    if not page.locator('#check-summary[data-state="finished"]').count():
        run_checks(page, live_url, "solution")
    page.click(f'details[data-check="{check}"] summary')
    labels = page.locator(f'details[data-check="{check}"] figure.sequence').evaluate(LABEL_BOXES)
    refused = [label for label in labels if label["kind"] == "refused"]
    assert refused and any(reason in label["text"] for label in refused)
    for label in labels:
        # Wrapping may split a long word; nothing is left out or cut off with "…".
        assert "".join(label["text"].split()) == "".join(label["title"].split())
        assert label["in_svg"] and label["in_panel"], label
    legend = page.locator(f'details[data-check="{check}"] figure.sequence').evaluate(LEGEND_BOXES)
    assert legend and all(entry["in_svg"] for entry in legend), legend
    # The tags and the legend are in the page's language.
    assert any(label["text"].startswith(worded(lang, "✗ REFUSED")) for label in refused)
    replayed = worded(lang, "↺ replayed answer (same run, nothing inserted)")
    assert replayed in [entry["text"] for entry in legend], legend
    if check == "5" and lang == i18n.ENGLISH:
        screenshot(page, "checks-diagram", docs=True, docs_from=f'details[data-check="{check}"]')


def test_the_fail_box_is_unticked_after_a_send(page: Any, live_url: str) -> None:
    """ "make the demo executor fail this run" applies to one send: the box clears after it."""
    page.goto(f"{live_url}/runs/starter")
    send(page, "fail-once", fail=True)
    assert not page.is_checked("#send-fail")
    row = page.locator("tr[data-run]").first
    assert "(set to fail)" in row.inner_text()
    run_id = send(page, "fail-not-again")
    assert "(set to fail)" not in page.locator(f'tr[data-run="{run_id}"]').inner_text()


def test_a_repeated_client_id_that_makes_a_new_run_is_flagged(page: Any, live_url: str) -> None:
    """On the starter, sending the same clientMessageId twice shows ⚠ NEW run, not a green ✓."""
    page.goto(f"{live_url}/runs/starter")
    first = send(page, "same-twice")
    second = send(page, "same-twice")
    outcome = page.locator("#last-outcome")
    assert second != first and "warn" in (outcome.get_attribute("class") or "")
    assert (
        outcome.inner_text().startswith("⚠") and f"already made run {first}" in outcome.inner_text()
    )


def test_a_run_opened_while_pending_follows_it_to_its_end(page: Any, live_url: str) -> None:
    """A pending run's page polls; when a worker picks the run up it moves live, and once the
    run is done the page stops polling."""
    page.goto(f"{live_url}/runs/solution")
    run_id = send(page, "pending-then-played")
    page.goto(f"{live_url}/runs/solution/{run_id}")
    assert page.locator("#run-status").inner_text() == "pending"
    assert page.locator("#run-body").get_attribute("hx-trigger")  # waiting for a worker
    worker = page.context.new_page()  # another tab switches the demo executor on
    worker.goto(f"{live_url}/runs/solution")
    worker.click("#demo-on")
    try:
        page.wait_for_selector('#run-status:has-text("streaming")', timeout=30_000)
        page.wait_for_selector('#run-status:has-text("done")', timeout=30_000)
        page.wait_for_selector("#run-body:not([hx-trigger])", state="attached")
    finally:
        worker.click("#demo-off")
        worker.wait_for_selector('#executor-state:has-text("off")')


def test_reload_and_language_switch_after_a_run_show_that_run(page: Any, live_url: str) -> None:
    """After Run the address is the page's own: F5 is no 405, and a language link keeps the
    tree and the store."""
    run_checks(page, live_url, "solution")
    assert page.url.endswith("/checks?tree=solution&store=memory"), page.url
    reloaded = page.reload()
    assert reloaded is not None and reloaded.status == 200
    assert "6 passed, 0 failed" in page.locator("#check-summary").inner_text()
    page.click("nav.lang a[hreflang='zh-CN']")
    page.wait_for_selector("html[lang='zh-CN']")
    assert page.is_checked('input[name="tree"][value="solution"]')
    assert "6 项通过，0 项失败" in page.locator("#check-summary").inner_text()
    page.click("nav.lang a[hreflang='en']")
    page.wait_for_selector("html[lang='en']")
    assert page.is_checked('input[name="tree"][value="solution"]')


def test_run_pressed_while_a_tree_change_is_answered_shows_its_own_run(
    page: Any, live_url: str
) -> None:
    """Run pressed before the answer to a tree change has landed: the answer to Run is shown
    and followed to its end, with Run enabled again.

    The answers are held and let go in the order that once left the page stuck: the tree's
    page (rendered before the run began) lands after Run was pressed, and Run's answer after
    it. Run's answer went into the section the tree's page had just replaced, out of sight,
    while its disabled button came out of band: Run stayed disabled and nothing polled.
    """
    from playwright.sync_api import Error as PlaywrightError

    page.goto(f"{live_url}/checks")
    tree_pages: list[tuple[Any, Any]] = []
    runs: list[Any] = []

    def hold_tree_page(route: Any) -> None:
        if route.request.method != "GET":
            route.fallback()
            return
        tree_pages.append((route, route.fetch()))  # rendered now, delivered later

    page.route(re.compile(r"/checks\?"), hold_tree_page)

    def hold_run(route: Any) -> None:
        runs.append(route)

    page.route(re.compile(r"/checks/run$"), hold_run)
    page.check('input[name="tree"][value="solution"]')
    while not tree_pages:
        page.wait_for_timeout(20)
    page.click("#run-checks")
    while not runs:
        page.wait_for_timeout(20)
    route, rendered = tree_pages[0]
    with contextlib.suppress(PlaywrightError):  # the page may have given up that request
        route.fulfill(response=rendered)
    page.wait_for_timeout(100)  # the tree's page lands (or not) before Run's answer
    runs[0].continue_()
    page.wait_for_selector('#check-summary[data-state="finished"]', timeout=60_000)
    page.wait_for_selector("#run-checks:not([disabled])", timeout=10_000)
    page.unroute_all()
    now = page.request.get(f"{live_url}/checks?tree=solution&store=memory", headers={})
    shown = page.locator("#check-summary").inner_text()
    assert "6 passed, 0 failed" in shown
    # The page shows the run the dashboard has now, not one from before Run was pressed.
    finished_at = re.search(r"at (\d\d:\d\d:\d\d) in", shown)
    assert finished_at and finished_at.group(0) in now.text(), (shown, now.text()[-2000:])
