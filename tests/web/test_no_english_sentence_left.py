"""No English sentence on a dashboard page shown in Chinese, whatever state the page is in.

test_pages_translated.py looks for the catalog's own English; this test looks for any
English: a sentence built in the code without _(), a detail journalled in English, a
label computed at import time. The pages are driven into the states that word things
with values: a journal full of details, a refused move, a replay, a stalled demo
executor, the bench with Postgres unavailable, a busy 409, a timed-out check run and
its sequence diagrams.

What stays as written is left out before looking: code elements (commands, SQL, an
exception's own message), data the learner or the trees wrote (a message's content,
a trace's labels), and the words the lab keeps in English (status names, lanes,
stores, trees).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.support.english import english_runs
from web.safety.jobs import HeavyJobs
from web.views.race import race_job

from .conftest import make_app
from .pages import HTMX, diagrams, finish, finished_checks, send, wait_for

CHINESE = {"Accept-Language": "zh-CN"}
UNREACHABLE = "postgresql://lab:lab@127.0.0.1:1/lab"
# Attributes a learner reads (hover text, screen readers) beside the text nodes.
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")
# Elements whose text is code or a program's output, shown as it is.
CODE_TAGS = {"code", "kbd", "samp", "script", "style"}
# Elements holding words the dashboard did not write: a message's content, the input a
# learner typed, what a trace recorded, what a tree's code said.
DATA_CLASSES = {"content", "input", "said"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
# Words kept in English on a Chinese page: names in the code, not sentences.
KEPT = {
    *("pending", "running", "streaming", "done", "failed", "cancelled"),  # statuses
    *("client", "gateway", "store", "worker"),  # the diagram's lanes
    *("memory", "postgres", "starter", "solution"),  # stores and trees
    *("dashboard", "demo", "mini-koda", "lab"),  # journal actors, the brand
    *("English", "seq", "head", "upgrade", "alembic"),
}


class VisibleText(HTMLParser):
    """The pieces of text a learner reads on a page, code and data left out."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []
        self._open: list[tuple[str, bool]] = []  # each open element, and whether it hides text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        hides = tag in CODE_TAGS or bool(classes & DATA_CLASSES)
        if tag not in VOID:
            self._open.append((tag, hides))
        if not hides and not self._hidden():
            self.pieces += [v for k, v in attrs if k in READ_ATTRIBUTES and v]

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if not self._hidden() and data.strip():
            self.pieces.append(data)

    def _hidden(self) -> bool:
        """True inside code or data: its text is not the dashboard's."""
        return any(hides for _tag, hides in self._open)


def english_on(page: str) -> list[str]:
    """Every run of three or more English words a learner reads on the page."""
    parser = VisibleText()
    parser.feed(page)
    return [run for piece in parser.pieces for run in english_runs(" ".join(piece.split()), KEPT)]


# -- the detector can fail ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "found"),
    [
        ("<p>运行 starter 的检查</p>", []),
        ("<p>the store answers again</p>", ["the store answers again"]),
        ("<p>已拒绝：<code>run X cannot move done -> running</code></p>", []),
        (
            "<p>卡住了（timed out after 4 s and was stopped）</p>",
            ["timed out after s and was stopped"],
        ),
        ("<p>pending running streaming done</p>", []),
        ('<span title="a replayed answer here">↺</span>', ["a replayed answer here"]),
        (
            '<td class="detail">stored beside 1 other(s) at seq 3</td>',
            ["stored beside other at seq"],
        ),
        ('<td class="content">book me a flight</td>', []),
        ("<text>✗ REFUSED (error raised, or 4xx)</text>", ["error raised or"]),
        (
            "<p>无法使用 Postgres（OperationalError: x），改用 memory</p>",
            [],
        ),
        (
            "<p>Postgres could not be used (OperationalError: x)</p>",
            ["Postgres could not be used OperationalError x"],
        ),
    ],
)
def test_the_detector_finds_english_and_only_english(html: str, found: list[str]) -> None:
    """English sentences are found inside Chinese ones; code, data and kept words are not."""
    assert english_on(html) == found


# -- the states the pages are driven into ---------------------------------------------------


@pytest.fixture
def chinese_app() -> Iterator[Flask]:
    """A dashboard on the memory store whose demo executor is fast."""
    yield from make_app(DEMO_PACE=0.01)


def zh(client: FlaskClient, url: str, **headers: str) -> str:
    """The page at url in Chinese (any status: an error page must read in Chinese too)."""
    sep = "&" if "?" in url else "?"
    return client.get(f"{url}{sep}lang=zh_CN", headers={**CHINESE, **headers}).text


def assert_chinese(pages: dict[str, str]) -> None:
    """Fail naming every page that shows a run of English words, and the runs."""
    left = {name: english_on(page) for name, page in pages.items()}
    left = {name: runs for name, runs in left.items() if runs}
    assert not left, "English on Chinese pages:\n" + "\n".join(
        f"  {name}: {runs}" for name, runs in left.items()
    )


def test_the_runs_pages_in_chinese_with_a_full_journal(chinese_app: Flask) -> None:
    """Sent runs, a replay, refused and illegal moves, duplicates, a burst, bad fields."""
    client = chinese_app.test_client()
    client.get("/checks?lang=zh_CN")  # the language is remembered for the buttons
    pages: dict[str, str] = {}
    for tree in ("starter", "solution"):
        run_id, _ = send(client, tree, client_id=f"zh-{tree}")
        client.post(f"/runs/{tree}/{run_id}/again", headers=HTMX)  # a replay, or a new run
        pages[f"{tree}: sent again"] = zh(client, f"/runs/{tree}", **HTMX)
        send(client, tree, client_id=f"zh-{tree}")  # a retry through the form
        finish(client, tree, run_id)
        pages[f"{tree}: forced back"] = client.post(
            f"/runs/{tree}/{run_id}/force", headers=HTMX
        ).text
        pages[f"{tree}: duplicate seq"] = client.post(
            f"/runs/{tree}/{run_id}/duplicate-seq", headers=HTMX
        ).text
        pages[f"{tree}: burst"] = client.post(
            f"/runs/{tree}/burst", data={"message": "x", "copies": "3"}, headers=HTMX
        ).text
        pages[f"{tree}: bad field"] = client.post(
            f"/runs/{tree}/burst", data={"message": "x", "copies": "1000"}, headers=HTMX
        ).text
        pages[f"{tree}: bad move"] = client.post(
            f"/runs/{tree}/{run_id}/advance", data={"target": "pending"}, headers=HTMX
        ).text
        pages[f"{tree}: page"] = zh(client, f"/runs/{tree}")
        pages[f"{tree}: run page"] = zh(client, f"/runs/{tree}/{run_id}")
        pages[f"{tree}: no such run"] = zh(client, f"/runs/{tree}/nosuchrun")
    assert_chinese(pages)


class BuggyStore:
    """A store whose transition has a learner's bug: it raises something unexpected."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def transition(self, *args: Any) -> None:
        raise KeyError("a learner's bug in transition")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class DownStore:
    """A store that has stopped answering the demo executor."""

    def __init__(self, store: Any, unavailable: type[Exception]) -> None:
        self._store = store
        self._unavailable = unavailable

    def __getattr__(self, name: str) -> Any:
        if threading.current_thread().name.startswith("demo-"):
            raise self._unavailable("connection refused (the test stopped the store)")
        return getattr(self._store, name)


def test_the_demo_executor_in_chinese(chinese_app: Flask) -> None:
    """A run played to failed, a run skipped for a bug, the store down and back."""
    client = chinese_app.test_client()
    client.get("/checks?lang=zh_CN")
    bench = chinese_app.extensions["mini_koda_lab"].bench("solution")
    run_id, _ = send(client, "solution", client_id="zh-fail", fail="on")
    client.post("/runs/solution/demo", data={"switch": "on", "pace": "fast"}, headers=HTMX)
    wait_for(client, f"/runs/solution/{run_id}", r'id="run-status"[^>]*>\s*failed')
    pages = {"played to failed": zh(client, f"/runs/solution/{run_id}")}
    real = bench.store
    bench.store = BuggyStore(real)
    send(client, "solution", client_id="zh-bug")
    pages["skipped"] = wait_for(client, "/runs/solution", "KeyError")
    bench.store = DownStore(real, bench.unavailable)
    pages["stalled"] = wait_for(client, "/runs/solution", 'id="executor-stalled"')
    bench.store = real
    pages["resumed"] = wait_for(client, "/runs/solution", 'data-outcome="resumed"')
    client.post("/runs/solution/demo", data={"switch": "off", "pace": "fast"}, headers=HTMX)
    pages["switched off"] = zh(client, "/runs/solution")
    assert_chinese(pages)


def test_the_bench_without_its_postgres_in_chinese() -> None:
    """Postgres could not be used: the notice, the race and database views, in Chinese."""
    for app in make_app(DATABASE_URL=UNREACHABLE):
        client = app.test_client()
        client.get("/checks?lang=zh_CN")
        pages = {
            "runs": zh(client, "/runs/starter"),
            "database": zh(client, "/database"),
            "race refused": client.post(
                "/race", data={"requests": "4", "delay_ms": "0"}, headers=HTMX
            ).text,
            "race bad field": client.post(
                "/race", data={"requests": "1", "delay_ms": "0"}, headers=HTMX
            ).text,
        }
        jobs: HeavyJobs = app.extensions["mini_koda_lab"].jobs
        with jobs.hold("race", race_job(32, 20)):  # as another tab's race holds it
            pages["race busy"] = client.post(
                "/race", data={"requests": "4", "delay_ms": "0"}, headers=HTMX
            ).text
        assert_chinese(pages)


def test_the_check_pages_in_chinese(chinese_app: Flask) -> None:
    """Before, while and after a run, the diagrams, a busy 409, and runs that timed out."""
    client = chinese_app.test_client()
    client.get("/checks?lang=zh_CN")
    pages = {"empty": zh(client, "/checks")}
    started = client.post(
        "/checks/run", data={"tree": "solution", "store": "memory"}, follow_redirects=True
    )
    pages["started"] = started.text
    pages["busy"] = client.post(
        "/checks/run", data={"tree": "starter", "store": "memory"}, headers=HTMX
    ).text
    finished_checks(client, "solution")
    pages["solution"] = zh(client, "/checks?tree=solution&store=memory")
    client.post("/checks/run", data={"tree": "starter", "store": "memory"})
    finished_checks(client, "starter")
    pages["starter"] = zh(client, "/checks?tree=starter&store=memory")
    for key, diagram in diagrams(client, pages["starter"]).items():
        pages[f"starter's diagram {key}"] = diagram
    lab = chinese_app.extensions["mini_koda_lab"]
    lab.check_timeout = 0.05
    client.post("/checks/run", data={"tree": "starter", "store": "memory"})
    pages["timed out"] = finished_checks(client, "starter")
    pages["bad store"] = zh(client, "/checks?tree=starter&store=nosuch")
    assert_chinese(pages)


PLAIN_PAGES = ["/checks", "/race", "/database", "/review", "/diff", "/runs/starter"]


@pytest.mark.parametrize("path", PLAIN_PAGES)
def test_every_page_in_chinese(client: FlaskClient, path: str) -> None:
    """The pages as a first visit shows them."""
    assert_chinese({path: zh(client, path)})


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("get", "/nosuch", {}),
        ("get", "/runs/nosuch", {}),
        ("post", "/checks", {}),
        ("post", "/runs/starter/send", {"Sec-Fetch-Site": "cross-site"}),
        ("get", "/nosuch", HTMX),
    ],
)
def test_error_pages_in_chinese(
    client: FlaskClient, method: str, path: str, headers: dict[str, str]
) -> None:
    """An unknown page, a wrong method, a cross-site write: the error reads in Chinese."""
    call: Callable[..., Any] = getattr(client, method)
    answer = call(f"{path}?lang=zh_CN", headers={**CHINESE, **headers})
    assert answer.status_code >= 400
    assert_chinese({f"{method} {path}": answer.text})


@pytest.mark.postgres
def test_the_postgres_pages_in_chinese(postgres_client: FlaskClient) -> None:
    """On a real Postgres: the runs bench, each tree's catalog, and a race's outcome."""
    client = postgres_client
    client.get("/checks?lang=zh_CN")
    run_id, _ = send(client, "solution", client_id="zh-pg")
    finish(client, "solution", run_id)
    client.post(f"/runs/solution/{run_id}/force", headers=HTMX)
    pages = {
        "runs": zh(client, "/runs/solution"),
        "database": zh(client, "/database"),
        "race": client.post("/race", data={"requests": "6", "delay_ms": "40"}, headers=HTMX).text,
    }
    assert 'data-path="' in pages["race"], "the race ran"
    assert_chinese(pages)
