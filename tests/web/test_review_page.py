"""The Review page: answer first, then the analysis; marks kept; the checklist verified."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from labs.review import checklist, questions
from labs.term import i18n

from .browser import browser, live_url, page, screenshot
from .pages import HTMX

__all__ = ["browser", "live_url", "page"]  # fixtures, imported so pytest finds them


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Answers and marks go to a state folder of this test's own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    return folder


def statuses(page: str) -> dict[str, str]:
    """Each checklist item's status as the page shows it."""
    return dict(re.findall(r'id="item-([\w-]+)" data-status="(\w+)"', page))


def test_the_page_asks_every_question_with_a_box_for_the_answer(client: FlaskClient) -> None:
    """Each question appears with its own textarea, and the nav marks Review as current."""
    page = client.get("/review").text
    for question in questions.all_questions():
        assert f'id="q-{question.id}"' in page
        assert f'id="answer-{question.id}"' in page
    assert re.search(r'href="/review"\s+aria-current="page"', page)


def test_the_analysis_is_hidden_until_the_learner_answers(client: FlaskClient) -> None:
    """No key point shows on the page; posting an answer reveals that question's alone."""
    split, keys = questions.find("split"), questions.find("keys")
    page = client.get("/review").text
    assert split.key_points[0] not in page and "How to think it through" not in page
    revealed = client.post("/review/split", data={"answer": "slow runs"}, headers=HTMX).text
    assert split.key_points[0] in revealed and keys.key_points[0] not in revealed
    assert questions.saved_answers()["split"].answer == "slow runs"


@pytest.mark.parametrize("answer", ["", "   \n\t "])
def test_reveal_without_an_answer_shows_nothing_and_asks_for_one(
    client: FlaskClient, answer: str
) -> None:
    """An empty or blank answer is a 400 that asks for one; the analysis stays hidden."""
    split = questions.find("split")
    refused = client.post("/review/split", data={"answer": answer}, headers=HTMX)
    assert refused.status_code == 400 and "Write your answer first" in refused.text
    assert split.key_points[0] not in refused.text and "How to think it through" not in refused.text
    assert 'name="answer" rows="4" maxlength="5000" required' in client.get("/review").text


def test_marking_an_answer_keeps_the_mark_and_shows_it(client: FlaskClient) -> None:
    """After "partly" the mark is saved and its button shows as pressed."""
    client.post("/review/keys", data={"answer": "text ids"}, headers=HTMX)
    answer = client.post("/review/keys/mark", data={"mark": "partly"}, headers=HTMX).text
    assert re.search(r'value="partly" aria-pressed="true"', answer)
    saved = questions.saved_answers()["keys"]
    assert (saved.answer, saved.mark) == ("text ids", "partly")
    assert 'data-mark="partly"' in client.get("/review").text


def test_marking_got_it_updates_the_count_on_the_page(client: FlaskClient) -> None:
    """The htmx answer carries the "got it" count out of band; a plain page has it once."""
    answer = client.post("/review/split/mark", data={"mark": "got"}, headers=HTMX).text
    assert re.search(r'id="core-progress" hx-swap-oob="true">1 of 4', answer)
    page = client.post("/review/split/mark", data={"mark": "got"}).text
    assert page.count('id="core-progress"') == 1


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/review/keys/mark", {"mark": "perfect"}),
        ("/review/keys", {"answer": "x" * 5001}),
    ],
    ids=["unknown mark", "answer too long"],
)
def test_bad_input_is_named_and_nothing_is_saved(
    client: FlaskClient, url: str, data: dict[str, str]
) -> None:
    """A 400 with an error naming the field; the saved answers stay as they were."""
    answer = client.post(url, data=data, headers=HTMX)
    assert answer.status_code == 400
    field = next(iter(data))
    assert re.search(rf'role="alert">[^<]*{field}', answer.text)
    assert "keys" not in questions.saved_answers()


def test_an_unknown_question_is_a_404_naming_it(client: FlaskClient) -> None:
    """Posting to a question that does not exist answers 404 with its name."""
    answer = client.post("/review/nosuch", data={"answer": "x"}, headers=HTMX)
    assert answer.status_code == 404 and "nosuch" in answer.text


def test_another_sites_post_is_refused_and_saves_nothing(client: FlaskClient) -> None:
    """A cross-site POST gets 403 from the dashboard's origin check."""
    answer = client.post(
        "/review/split", data={"answer": "x"}, headers={"Origin": "http://elsewhere.example"}
    )
    assert answer.status_code == 403
    assert questions.saved_answers() == {}


def test_without_htmx_an_answer_gives_the_whole_page_back(client: FlaskClient) -> None:
    """A plain form post returns the full page with that question's analysis revealed."""
    page = client.post("/review/stateless", data={"answer": "no state in the process"}).text
    assert "<nav" in page and 'class="review-question revealed" id="q-stateless"' in page


def test_opening_review_runs_nothing_and_shows_the_last_verification(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first visit offers Verify and runs no check; after one, the page shows its result."""
    from labs.review import checklist

    runs: list[object] = []
    real = checklist.checklist

    def counted(*args: Any) -> Any:
        runs.append(args)
        return real(*args)

    monkeypatch.setattr(checklist, "checklist", counted)
    first = client.get("/review").text
    assert runs == [] and 'id="checklist-unverified"' in first and 'id="verify-checklist"' in first
    assert 'hx-trigger="load"' not in first
    client.post("/review/checklist?quick=1", headers=HTMX)
    again = client.get("/review").text
    assert len(runs) == 1 and 'id="checklist-summary"' in again
    assert "3 of 6 checks pass on the in-memory store" in again


def test_the_checklist_is_verified_by_the_lab(client: FlaskClient) -> None:
    """On the starter as shipped: 3 of 6 on memory, Postgres not verifiable, marks counted."""
    for question_id in ("split", "stateless", "idempotent"):
        questions.save(question_id, "answer", "got")
    page = client.post("/review/checklist?quick=1", headers=HTMX).text
    found = statuses(page)
    assert found["lab"] == "open" and found["interview"] == "done"
    assert "3 of 6 checks pass on the in-memory store; failing: 3, 4, 5" in page
    assert "not verifiable: DATABASE_URL is not set" in page
    assert found["architecture"] == "unverified"


def test_ticking_an_item_yourself_marks_it_done(client: FlaskClient) -> None:
    """Ticking the item only the learner can judge makes it done; unticking undoes it."""
    client.post("/review/checklist?quick=1", headers=HTMX)
    ticked = client.post(
        "/review/checklist/tick", data={"item": "architecture", "ticked": "on"}, headers=HTMX
    ).text
    assert statuses(ticked)["architecture"] == "done"
    unticked = client.post(
        "/review/checklist/tick", data={"item": "architecture", "ticked": ""}, headers=HTMX
    ).text
    assert statuses(unticked)["architecture"] == "unverified"


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The checklist's verification, counted, each taking a moment (when it started, each time)."""
    started: list[float] = []
    lock = threading.Lock()

    def slow(settings: checklist.Settings) -> list[checklist.Item]:
        with lock:
            started.append(time.monotonic())
        time.sleep(0.5)
        return []

    monkeypatch.setattr(checklist, "checklist", slow)
    return started


def test_a_cross_site_request_never_runs_the_checklist(
    client: FlaskClient, verifications: list[float]
) -> None:
    """A GET (from anywhere) and four cross-site POSTs at once verify nothing: 405 and 403s."""
    assert client.get("/review/checklist?quick=1", headers=HTMX).status_code == 405
    foreign = {**HTMX, "Origin": "https://elsewhere.example", "Sec-Fetch-Site": "cross-site"}
    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(lambda _: client.post("/review/checklist", headers=foreign), range(4))
        )
    assert [a.status_code for a in answers] == [403] * 4
    assert verifications == []


def test_four_verifications_at_once_run_one_and_say_busy_to_the_rest(
    client: FlaskClient, verifications: list[float]
) -> None:
    """The checklist takes the dashboard's one check-run slot: one runs, three answer 409."""
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: client.post("/review/checklist", headers=HTMX), range(4)))
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 409, 409, 409]
    assert len(verifications) == 1
    busy = next(a.text for a in answers if a.status_code == 409)
    assert "already going" in busy and "checklist-busy-notice" in busy


@pytest.mark.browser
def test_a_learner_answers_reveals_marks_and_sees_the_checklist(page: Any, live_url: str) -> None:
    """In Chromium: type an answer, reveal, mark it; the checklist arrives verified."""
    page.goto(f"{live_url}/review")
    assert page.locator("#q-idempotent .analysis").count() == 0
    page.fill("#answer-idempotent", "The unique constraint decides, not a check before the insert.")
    page.click("#reveal-idempotent")
    page.wait_for_selector("#q-idempotent .analysis")
    assert page.locator("#q-idempotent .key-points li").count() == len(
        questions.find("idempotent").key_points
    )
    page.click("#q-idempotent button[value=got]")
    page.wait_for_selector('#q-idempotent[data-mark="got"]')
    assert page.locator("#checklist-summary").count() == 0  # nothing verified on opening
    page.click("#verify-checklist")
    page.wait_for_selector("#checklist-summary", timeout=180_000)
    assert "3 of 6 checks pass on the in-memory store" in page.inner_text("#item-lab")
    assert 'question "idempotent" as got it' in page.inner_text("#item-scaling")
    screenshot(page, "review")


def test_chinese_texts_join_their_lines_without_a_space(client: FlaskClient) -> None:
    """A line break inside a Chinese sentence of the TOML shows as nothing, not a space."""
    client.get("/review?lang=zh_CN")
    page = client.post("/review/keys", data={"answer": "用 ULID"}, headers=HTMX).text
    chosen = i18n.speak("zh_CN")
    try:
        keys = questions.find("keys")
    finally:
        i18n.stop_speaking(chosen)
    source = "\n\n".join([keys.question, keys.analysis, *keys.key_points])
    junctions = re.findall(r"([\u2e80-\uffef])[ \t]*\n[ \t]*([\u2e80-\uffef])", source)
    assert junctions, "the Chinese texts break lines inside sentences: that is what is tested"
    missing = [a + b for a, b in junctions if a + b not in page]
    assert not missing
