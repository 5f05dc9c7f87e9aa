"""Sequence diagrams wrap long labels instead of cutting them, and rows never overlap,
in English and in Chinese (where a character takes two columns)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
import wcwidth
from flask import Flask

from labs.checking.api import LANES
from web.rendering.sequence import TAGS, WIDTH, draw_sequence, text_width

REASONS = [
    "ok",
    "IllegalTransitionError: run 01M8QJ252GC7CNNR4XGKVKR188 cannot move done -> running",
    "DuplicateMessageError: run 01M8QJ252GC7CNNR4XGKVKR188 already has a message at seq 0 "
    "(unique (run_id, seq))",
    "x" * 300,  # one word longer than any line
    "运行 01M8QJ252GC7CNNR4XGKVKR188 不能从 done 变成 running：" + "这是一段没有空格的中文说明" * 6,
]
LANGUAGES = ["en", "zh_CN"]


@pytest.fixture(params=LANGUAGES)
def language(request: pytest.FixtureRequest, app: Flask) -> Iterator[str]:
    """A request in each language: diagrams are laid out while a page is made."""
    with app.test_request_context(f"/checks?lang={request.param}"):
        yield request.param


@pytest.mark.parametrize(("source", "target"), list(itertools.product(LANES, LANES)))
@pytest.mark.parametrize("kind", list(TAGS))
def test_every_label_fits_whole_inside_the_picture(
    language: str, source: str, target: str, kind: str
) -> None:
    """Between any two lanes, each label's lines fit the width and together say all of it."""
    events = [{"source": source, "target": target, "kind": kind, "label": r} for r in REASONS]
    diagram = draw_sequence(events)
    for arrow, reason in zip(diagram.arrows, REASONS, strict=True):
        for line in arrow.lines:
            assert arrow.text_x + text_width(line) <= diagram.width - 8, line
        assert "".join(arrow.label.split()) == "".join(f"{arrow.tag}{reason}".split())
        assert "".join(arrow.said_lines).replace(" ", "") == reason.replace(" ", "")
        assert arrow.lines[0].startswith(arrow.tag)
        assert "…" not in arrow.label


def test_the_tags_and_the_legend_speak_the_pages_language(app: Flask) -> None:
    """The same events give English words on an English page, Chinese on a Chinese one."""
    events = [{"source": "store", "target": "client", "kind": "refused", "label": "Boom: no"}]
    with app.test_request_context("/checks?lang=en"):
        english = draw_sequence(events)
    with app.test_request_context("/checks?lang=zh_CN"):
        chinese = draw_sequence(events)
    assert english.arrows[0].tag == "✗ REFUSED" and chinese.arrows[0].tag == "✗ 已拒绝"
    assert english.arrows[0].said_lines == chinese.arrows[0].said_lines == ("Boom: no",)
    assert [words for _kind, words, _x, _y in english.legend][1] == "answer"
    assert all(not words.isascii() for _kind, words, _x, _y in chinese.legend)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_legend_fits_on_its_rows_in_columns(app: Flask, lang: str) -> None:
    """Each legend entry ends inside the picture, its width counted in columns, above the lanes."""
    with app.test_request_context(f"/checks?lang={lang}"):
        legend = draw_sequence([]).legend
    for _kind, words, x, y in legend:
        assert x + 42 + wcwidth.width(words) * 6.8 <= WIDTH and y < 52
    for (_k, _w, x1, y1), (_k2, _w2, x2, y2) in itertools.pairwise(legend):
        assert y2 > y1 or x2 > x1


def test_wrapped_rows_grow_and_never_overlap() -> None:
    """A wrapped label makes its row taller: each row starts below the previous arrow."""
    events = [
        {"source": "client", "target": "gateway", "kind": kind, "label": reason}
        for kind, reason in itertools.product(["call", "refused"], REASONS)
    ]
    diagram = draw_sequence(events)
    for before, after in itertools.pairwise(diagram.arrows):
        assert after.top > before.y
    assert any(len(a.lines) > 1 for a in diagram.arrows)
    assert diagram.arrows[-1].y < diagram.lane_bottom < diagram.height
