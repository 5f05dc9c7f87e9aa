"""A tree with an endless loop never hangs the runs view: its process is killed at the time
limit, the page says why, and the next request starts a new one."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from flask import Flask

from labs.trees.finding import find_tree

from .conftest import make_app
from .pages import HTMX, form_error, run_ids, send
from .test_no_english_sentence_left import english_on

LIMIT = 1.0  # the runs view's time limit in these tests, in seconds
# What a page may take beyond the limit: the answer, its rendering, a busy machine.
SLACK = 5.0
LOOP = """

import os as _os


def _endless(*args, **kwargs):
    while _os.path.exists({flag!r}):  # a learner's endless loop
        pass
    return _shipped(*args, **kwargs)


_shipped, MemoryStore.{method} = MemoryStore.{method}, _endless
"""
BUG = """

import os as _os


def _buggy(self, run_id):
    if _os.path.exists({flag!r}):
        raise ZeroDivisionError("a learner's bug")
    return _messages_for_run(self, run_id)


_messages_for_run, MemoryStore.messages_for_run = MemoryStore.messages_for_run, _buggy
"""
T = TypeVar("T")


def loop_in(tree: Path, method: str, flag: Path | None = None) -> Path:
    """Make one of the tree's MemoryStore methods loop while a file exists (the tree itself)."""
    flag = flag or tree
    with (tree / "infra" / "memory.py").open("a", encoding="utf-8") as source:
        source.write(LOOP.format(method=method, flag=str(flag)))
    return flag


@pytest.fixture
def hung_app(tree_copy: Path) -> Iterator[Flask]:
    """A dashboard whose starter is a copy of it, with a time limit of LIMIT seconds."""
    yield from make_app(TREES={"starter": str(tree_copy)}, RUNS_TIMEOUT=LIMIT)


def timed(call: Callable[[], T]) -> tuple[T, float]:
    """What call() returns, and how long it took."""
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def test_a_send_that_loops_answers_at_the_limit_and_says_why(
    hung_app: Flask, tree_copy: Path
) -> None:
    """POST /chat loops in the store: a 503 naming the limit comes back within it, not a hang."""
    loop_in(tree_copy, "create_run")
    client = hung_app.test_client()
    assert client.get("/runs/starter").status_code == 200  # the host is up before the clock
    answer, took = timed(
        lambda: client.post("/runs/starter/send", data={"message": "hi"}, headers=HTMX)
    )
    assert answer.status_code == 503, answer.text
    said = form_error(answer.text)
    assert f"did not answer within {LIMIT:g} s" in said and "endless loop" in said, said
    assert "stopped its process" in said
    assert LIMIT <= took < LIMIT + SLACK


def test_the_next_request_starts_a_new_host_and_says_it_was_restarted(
    hung_app: Flask, tree_copy: Path
) -> None:
    """After the loop was stopped, the page answers at once from a new host, and says so."""
    loop_in(tree_copy, "create_run")
    client = hung_app.test_client()
    client.post("/runs/starter/send", data={"message": "hi"}, headers=HTMX)
    page, took = timed(lambda: client.get("/runs/starter", headers=HTMX))
    assert took < SLACK and page.status_code == 200
    assert 'id="runs-restarted"' in page.text and "began empty" in page.text
    assert hung_app.extensions["mini_koda_lab"].bench("starter").link.starts == 2


def test_pages_waiting_behind_a_hung_request_answer_within_the_limit_too(
    hung_app: Flask, tree_copy: Path, tmp_path: Path
) -> None:
    """Two page loads at once on a tree whose read loops: each answers, 503, within the bound."""
    flag = loop_in(tree_copy, "messages_for_run", tmp_path / "loop-now")
    client = hung_app.test_client()
    run_id, _ = send(client, "starter")
    flag.touch()  # from now on, reading the run's messages never ends
    answers: list[tuple[int, float]] = []

    def load() -> None:
        page, took = timed(lambda: hung_app.test_client().get("/runs/starter", headers=HTMX))
        answers.append((page.status_code, took))

    threads = [threading.Thread(target=load) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=4 * (LIMIT + SLACK))
    assert len(answers) == 2, "a page load is still waiting on the tree"
    assert all(status == 503 and took < LIMIT + SLACK for status, took in answers), answers
    flag.unlink()
    assert run_id not in run_ids(client.get("/runs/starter", headers=HTMX).text)


def test_requests_that_never_get_the_line_say_busy_and_stop_nothing(hung_app: Flask) -> None:
    """Other requests keep the line past the limit: 503 "busy", not "endless loop"; no restart.

    Both a button (POST) and a page load (GET, which first makes sure a host runs)
    give up at the limit: neither waits for the line without end.
    """
    client = hung_app.test_client()
    assert client.get("/runs/starter", headers=HTMX).status_code == 200  # the host is up
    link = hung_app.extensions["mini_koda_lab"].bench("starter").link
    with link._lock:  # as many polling pages would: the line is taken for the whole limit
        sent, send_took = timed(
            lambda: client.post("/runs/starter/send", data={"message": "hi"}, headers=HTMX)
        )
        page, page_took = timed(lambda: client.get("/runs/starter", headers=HTMX))
    for answer, took in ((sent, send_took), (page, page_took)):
        said = form_error(answer.text)
        assert answer.status_code == 503 and LIMIT <= took < LIMIT + SLACK, (took, said)
        assert "busy" in said and "endless loop" not in said and "stopped" not in said, said
    assert link.starts == 1  # the tree was fine: its host still runs
    assert client.get("/runs/starter", headers=HTMX).status_code == 200


def test_a_fixed_tree_is_served_again_without_restarting_the_dashboard(
    hung_app: Flask, tree_copy: Path
) -> None:
    """The learner removes the loop: the next host imports the fixed code, and sending works."""
    memory = tree_copy / "infra" / "memory.py"
    shipped = memory.read_text(encoding="utf-8")
    loop_in(tree_copy, "create_run")
    client = hung_app.test_client()
    answer = client.post("/runs/starter/send", data={"message": "hi"}, headers=HTMX)
    assert answer.status_code == 503
    memory.write_text(shipped, encoding="utf-8")
    run_id, page = send(client, "starter", client_id="fixed")
    assert run_ids(page) == [run_id]


def test_the_dashboard_never_imports_the_tree_it_shows(hung_app: Flask, tree_copy: Path) -> None:
    """The runs view works through the tree's host: no module of the tree is in this process."""
    client = hung_app.test_client()
    send(client, "starter")
    package = find_tree(str(tree_copy)).package
    assert not [name for name in sys.modules if name.split(".")[0] == package]


def test_the_notices_of_a_hung_tree_speak_chinese(hung_app: Flask, tree_copy: Path) -> None:
    """In Chinese, the time-out and the restart are told without an English sentence."""
    loop_in(tree_copy, "create_run")
    client = hung_app.test_client()
    client.get("/checks?lang=zh_CN")  # the learner picks Chinese; the cookie keeps it
    hung = client.post("/runs/starter/send", data={"message": "hi"}, headers=HTMX).text
    restarted = client.get("/runs/starter").text
    assert "秒内没有应答" in form_error(hung) and 'id="runs-restarted"' in restarted
    assert english_on(hung) == [] and english_on(restarted) == []


def test_a_store_that_raises_a_bug_is_a_notice_not_a_500(
    hung_app: Flask, tree_copy: Path, tmp_path: Path
) -> None:
    """A learner's bug raising in a read the table needs: the page says what it raised, 503."""
    flag = tmp_path / "raise-now"
    with (tree_copy / "infra" / "memory.py").open("a", encoding="utf-8") as source:
        source.write(BUG.format(flag=str(flag)))
    client = hung_app.test_client()
    send(client, "starter")
    flag.touch()
    answer = client.get("/runs/starter", headers=HTMX)
    assert answer.status_code == 503
    assert "ZeroDivisionError: a learner's bug" in form_error(answer.text)
