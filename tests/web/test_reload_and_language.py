"""Reloading, going back and switching language after a run show that run, in the page's words."""

from __future__ import annotations

import contextvars
import html
import re

import pytest
from flask import Flask
from flask.testing import FlaskClient

from .pages import HTMX, finished_checks

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_FAILURE = "expected: IllegalTransitionError for done -> running"
CHINESE_FAILURE = "done -> running 抛出 IllegalTransitionError"


def row(page: str, key: str) -> str:
    """One check row's markup."""
    found = re.search(rf'<details [^>]*data-check="{key}".*?</details>', page, re.S)
    assert found, f"no row for check {key}"
    return html.unescape(found.group(0))


def language_links(page: str) -> dict[str, str]:
    """The language switch's addresses, by language."""
    return {
        lang: html.unescape(href)
        for href, lang in re.findall(r'<a href="([^"]+)" hreflang="([\w-]+)"', page)
    }


def test_the_run_button_leaves_the_page_address_and_it_reloads(client: FlaskClient) -> None:
    """htmx is told to show /checks?tree&store, never /checks/run; that address shows the run."""
    answer = client.post("/checks/run", data={"tree": "solution", "store": "memory"}, headers=HTMX)
    assert answer.headers["HX-Replace-Url"] == "/checks?tree=solution&store=memory"
    assert "HX-Push-Url" not in answer.headers
    finished_checks(client, "solution")
    reloaded = client.get("/checks?tree=solution&store=memory")
    assert reloaded.status_code == 200 and "6 passed, 0 failed" in reloaded.text
    assert client.get("/checks/run?tree=solution").status_code == 302


def test_pages_are_never_served_from_a_cache(client: FlaskClient) -> None:
    """Back or a reload asks again: every page says no-store."""
    for path in ("/checks", "/runs/starter", "/review"):
        assert client.get(path).headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    ("pressed", "viewer", "shown", "never"),
    [
        ({"lang": "zh_CN"}, {}, ENGLISH_FAILURE, CJK),
        ({}, {"lang": "zh_CN"}, CHINESE_FAILURE, re.compile("expected:")),
    ],
    ids=["a Chinese page ran, an English one shows", "an English page ran, a Chinese one shows"],
)
def test_results_show_in_the_language_of_the_page_that_shows_them(
    app: Flask,
    pressed: dict[str, str],
    viewer: dict[str, str],
    shown: str,
    never: re.Pattern[str],
) -> None:
    """Whoever pressed Run, each page words the rows in its own language."""
    runner, reader = app.test_client(), app.test_client()
    runner.get("/checks", query_string=pressed)  # picks the runner's language (a cookie)
    runner.post("/checks/run", data={"tree": "starter", "store": "memory"}, headers=HTMX)
    finished_checks(runner, "starter")
    page = reader.get("/checks", query_string={"tree": "starter", **viewer}).text
    failure = row(page, "4")
    assert shown in failure
    assert not never.search(re.sub(r'<code class="hint".*?</code>', "", failure, flags=re.S))


@pytest.mark.parametrize(
    "path",
    ["/checks?tree=solution&store=memory", "/runs/solution?page=1", "/review?lang=en"],
)
def test_the_language_links_keep_the_query(client: FlaskClient, path: str) -> None:
    """The links to each language are this page with every query value kept, lang set."""
    links = language_links(client.get(path).text)
    query = dict(re.findall(r"(\w+)=(\w+)", path.partition("?")[2]))
    for lang, href in links.items():
        wanted = {**query, "lang": lang.replace("-", "_")}
        assert href.partition("?")[0] == path.partition("?")[0]
        assert dict(re.findall(r"(\w+)=(\w+)", href.partition("?")[2])) == wanted


def test_a_form_posted_without_htmx_links_to_the_page_it_came_from(client: FlaskClient) -> None:
    """The answer to a plain POST names the page of its Referer, never the POST's address."""
    answer = client.post(
        "/runs/solution/send",
        data={"message": "hi", "client_message_id": "c"},
        headers={"Referer": "http://localhost/runs/solution?page=1"},
    )
    links = language_links(answer.text)
    assert links["zh-CN"] == "/runs/solution?page=1&lang=zh_CN"


def test_a_chinese_review_page_leaves_the_threads_language_alone(client: FlaskClient) -> None:
    """The Review page speaks the page's language while it is made, and no longer: the thread
    that made it (a test, a server's next request) gets its own language back."""
    from labs.review import texts
    from labs.term import i18n

    process_language = i18n.current()
    assert "复习" in client.get("/review?lang=zh_CN").text
    assert i18n.current() == process_language
    in_process_language = texts.load("questions", process_language)["labels"]["title"]
    assert texts.load("questions")["labels"]["title"] == in_process_language


def test_a_check_run_words_every_language_in_its_own_thread_alone(client: FlaskClient) -> None:
    """The run's driver speaks every language at once in a context of its own: a message the
    dashboard's own thread translates meanwhile and after is plain text in its language."""
    from labs.term import i18n
    from web.checkruns.phrases import EveryLanguage, Phrase

    client.post("/checks/run", data={"tree": "solution", "store": "memory"}, headers=HTMX)
    assert type(i18n._("the check to run to the end")) is str  # the run goes on meanwhile
    finished_checks(client, "solution")
    assert type(i18n._("the check to run to the end")) is str
    apart = contextvars.copy_context()
    apart.run(i18n.use_translations, EveryLanguage())
    worded = apart.run(i18n._, "the check to run to the end")
    assert isinstance(worded, Phrase) and CJK.search(worded.texts[i18n.CHINESE])
    assert type(i18n._("the check to run to the end")) is str
