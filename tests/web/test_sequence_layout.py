"""Sequence diagrams wrap long labels instead of cutting them, and rows never overlap."""

from __future__ import annotations

import itertools

import pytest

from labs.trace import LANES
from web.sequence import CHAR_WIDTH, TAGS, draw_sequence

REASONS = [
    "ok",
    "IllegalTransitionError: run 01M8QJ252GC7CNNR4XGKVKR188 cannot move done -> running",
    "DuplicateMessageError: run 01M8QJ252GC7CNNR4XGKVKR188 already has a message at seq 0 "
    "(unique (run_id, seq))",
    "x" * 300,  # one word longer than any line
]


@pytest.mark.parametrize(("source", "target"), list(itertools.product(LANES, LANES)))
@pytest.mark.parametrize("kind", list(TAGS))
def test_every_label_fits_whole_inside_the_picture(source: str, target: str, kind: str) -> None:
    """Between any two lanes, each label's lines fit the width and together say all of it."""
    events = [{"source": source, "target": target, "kind": kind, "label": r} for r in REASONS]
    diagram = draw_sequence(events)
    for arrow, reason in zip(diagram.arrows, REASONS, strict=True):
        for line in arrow.lines:
            assert arrow.text_x + len(line) * CHAR_WIDTH <= diagram.width - 8
        assert "".join(arrow.label.split()) == "".join((TAGS[kind] + reason).split())
        assert "…" not in arrow.label


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
