"""Every dashboard page shown in Simplified Chinese leaves none of the catalog's English behind,
and an error page, in each language, names the error in it."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from html.parser import HTMLParser

import pytest
from flask.testing import FlaskClient

from tests.support.languages import LANGUAGES, page_tag, worded
from tests.term.test_translations import chinese_catalog

from .pages import HTMX, send

# Attributes a learner reads (hover text, screen readers) beside the text nodes.
READ_ATTRIBUTES = ("title", "aria-label", "placeholder")
# Elements holding the trees' own words (an exception's message, a message's content): data
# the dashboard shows as it is, not sentences of its own.
DATA_CLASSES = {"detail", "content"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
# A msgid with a placeholder cannot appear verbatim; it is checked through its fixed words.
PLACEHOLDER = re.compile(r"%\([a-z_]+\)[sd]|\{[a-z_]+(?::[^{}]*)?\}")


class VisibleText(HTMLParser):
    """The text nodes and read attributes of a page, each with its whitespace collapsed."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[str] = []
        self.lang = ""
        self._open: list[tuple[str, bool]] = []  # each open element, and whether it hides text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = set((dict(attrs).get("class") or "").split())
        if tag not in VOID:
            self._open.append((tag, tag in ("script", "style") or bool(classes & DATA_CLASSES)))
        if tag == "html":
            self.lang = dict(attrs).get("lang") or ""
        self.pieces += [" ".join(v.split()) for k, v in attrs if k in READ_ATTRIBUTES and v]

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if not any(hides for _tag, hides in self._open) and data.strip():
            self.pieces.append(" ".join(data.split()))


def visible(page: str) -> VisibleText:
    """Parse a page into what a learner reads on it."""
    parser = VisibleText()
    parser.feed(page)
    return parser


def english_left(english_page: str, chinese_page: str) -> list[str]:
    """The catalog's msgids shown on the English page that the Chinese page shows unchanged.

    A short msgid ("run", "Stop") counts only as a whole text node, so a word inside code or
    a run id is not mistaken for it; a sentence counts wherever it appears in a text node.
    """
    english, chinese = visible(english_page).pieces, visible(chinese_page).pieces
    left = []
    for msgid, translated in chinese_catalog().items():
        if translated == msgid or PLACEHOLDER.search(msgid):
            continue
        wanted = " ".join(msgid.split())
        if len(wanted.split()) >= 4:
            shown = any(wanted in p for p in english) and any(wanted in p for p in chinese)
        else:
            shown = wanted in english and wanted in chinese
        if shown:
            left.append(msgid)
    return sorted(left)


def fixed_words(msgid: str) -> list[str]:
    """The runs of English between a msgid's placeholders, long enough to mean something."""
    return [part.strip() for part in PLACEHOLDER.split(msgid) if len(part.strip().split()) >= 3]


def english_fragments_left(english_page: str, chinese_page: str) -> list[str]:
    """The fixed words of placeholder msgids shown in English on both pages."""
    english = " ".join(visible(english_page).pieces)
    chinese = " ".join(visible(chinese_page).pieces)
    return sorted(
        words
        for msgid in chinese_catalog()
        if PLACEHOLDER.search(msgid)
        for words in fixed_words(msgid)
        if words in english and words in chinese
    )


def both_languages(
    client: FlaskClient, path: str, action: Callable[[str], object] = lambda lang: None
) -> tuple[str, str]:
    """The page at path in English and in Chinese, after doing action in that language.

    The language is picked with ?lang= (and kept by its cookie), so a button pressed by the
    action answers in it: an outcome is worded when it happens.
    """
    pages = []
    for lang in ("en", "zh_CN"):
        client.get(f"/checks?lang={lang}")
        action(lang)
        answer = client.get(f"{path}?lang={lang}")
        assert answer.status_code == 200, path
        pages.append(answer.text)
    return pages[0], pages[1]


PAGES = ["/checks", "/runs/starter", "/runs/solution", "/race", "/database", "/review", "/diff"]


@pytest.mark.parametrize("path", PAGES)
def test_a_page_in_chinese_shows_none_of_the_catalogs_english(
    client: FlaskClient, path: str
) -> None:
    """Whatever the catalog translates, the zh_CN page shows translated, under lang="zh-CN"."""

    def act(lang: str) -> None:
        """A run in the table, its timeline and the outcome of its button."""
        if path.startswith("/runs/"):
            send(client, path.rsplit("/", 1)[1], client_id=f"c-{lang}")

    english, chinese = both_languages(client, path, act)
    assert visible(chinese).lang == "zh-CN" and visible(english).lang == "en"
    assert english_left(english, chinese) == []
    assert english_fragments_left(english, chinese) == []


@pytest.mark.parametrize("tree", ["starter", "solution"])
def test_a_run_page_in_chinese_shows_none_of_the_catalogs_english(
    client: FlaskClient, tree: str
) -> None:
    """A run's page, with a duplicate seq in its strip, reads in Chinese too."""
    run_id, _ = send(client, tree)

    def act(lang: str) -> None:
        """A second write at a seq the run has: stored twice, or refused."""
        client.post(f"/runs/{tree}/{run_id}/duplicate-seq", headers=HTMX)

    english, chinese = both_languages(client, f"/runs/{tree}/{run_id}", act)
    assert visible(chinese).lang == "zh-CN"
    assert english_left(english, chinese) == []
    assert english_fragments_left(english, chinese) == []


def test_the_check_finds_a_message_left_in_english() -> None:
    """The comparison can fail: a catalog sentence on both pages is reported."""
    msgid = next(
        m
        for m, t in chinese_catalog().items()
        if t != m and len(m.split()) >= 4 and not PLACEHOLDER.search(m)
    )
    page = f'<html lang="zh-CN"><body><p>{html.escape(msgid)}</p></body></html>'
    assert english_left(page, page) == [msgid]


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_error_page_names_the_error_in_its_language(client: FlaskClient, language: str) -> None:
    """A 404 for a tree that does not exist reads in the page's language, with the code and the
    names kept, and in no other."""
    answer = client.get(f"/runs/nosuch?lang={language}")
    assert answer.status_code == 404
    page = visible(answer.text)
    assert page.lang == page_tag(language)
    text = " ".join(page.pieces)
    for other in LANGUAGES:
        status = worded(other, "Not Found")
        reason = worded(other, "no tree named {name}: choose one of {choices}").format(
            name="'nosuch'", choices="starter, solution"
        )
        if other == language:
            assert f"404 {status}" in text and reason in text, text
        else:
            assert status not in text and reason not in text, text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_error_page_names_its_status_once(client: FlaskClient, lang: str) -> None:
    """A full error page says its code and name in its heading, not again in the notice."""
    for path in ("/runs/nosuch", "/no/such/page"):
        answer = client.get(f"{path}?lang={lang}")
        assert answer.status_code == 404
        assert " ".join(visible(answer.text).pieces).count("404") == 1, path


def test_the_store_is_named_in_the_pages_language(client: FlaskClient) -> None:
    """A sentence that names the store says 内存 in Chinese, never the English word inside it."""
    english, chinese = both_languages(client, "/runs/starter")
    assert "(memory store)" in " ".join(visible(english).pieces)
    shown = " ".join(visible(chinese).pieces)
    assert "（内存存储）" in shown and "memory" not in shown
    for path in ("/runs/starter", "/checks", "/runs/solution"):  # no space inside the one word
        assert "内存 存储" not in " ".join(visible(both_languages(client, path)[1]).pieces), path
