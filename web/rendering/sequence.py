"""Laying out a check's trace as a sequence diagram: lanes across, arrows down.

Only geometry lives here; templates/partials/sequence.html draws it as SVG.
Replays, refusals and answers that let the lesson's rule be broken get their
own line style, marker and a text tag, so they read as such without colour.
A label too long for the room right of its arrow's start is wrapped onto more
lines (the arrow's row grows), so a refusal's reason is read whole in the
picture, not only in a tooltip.

The tags and the legend are in the page's language, so a diagram is laid
out when a page draws it: a Chinese character takes two columns, so the
room a text takes is counted in columns (wcwidth), not in characters.
"""

from __future__ import annotations

from dataclasses import dataclass

import wcwidth

from labs.checking.api import LANES, NEW_KEY, NOTES, SECOND_ROW, SECOND_RUN, Arrow
from labs.term.columns import wrap
from labs.term.i18n import N_

from ..i18n import _

LANE_GAP = 190
LEFT = 110
TOP = 110  # below the legend and the lane heads
ROW = 30
LINE = 14  # from one wrapped line of a label to the next
# Room right of the last lane for labels: the picture fills a row of the checks page at 1100 px.
WIDTH = LEFT + LANE_GAP * (len(LANES) - 1) + 320
# One column of 11px monospace text (DejaVu Sans Mono: 0.602 em), with a little to spare for
# symbols drawn from a fallback font (↺ ✗ →). A Chinese character takes two columns, 13.6 px,
# for a glyph 11 px wide.
CHAR_WIDTH = 6.8
MAX_ARROWS = 120

# What each kind of arrow says in words, before its label (in the page's language when drawn).
TAGS = {
    Arrow.CALL: "",
    Arrow.OK: "",
    Arrow.REPLAY: N_("↺ REPLAY"),
    Arrow.REFUSED: N_("✗ REFUSED"),
    Arrow.ERROR: N_("‼ ERROR"),
    Arrow.THROUGH: N_("⚠ WENT THROUGH"),
}
# An answer that let the lesson's rule be broken says how, by its note (labs/checking/marks.py).
NOTE_TAGS = {SECOND_RUN: N_("⚠ NEW RUN"), SECOND_ROW: N_("⚠ NEW RUN"), NEW_KEY: N_("⚠ NEW KEY")}
LEGEND_WORDS = [
    (Arrow.CALL, N_("call")),
    (Arrow.OK, N_("answer")),
    (Arrow.REPLAY, N_("↺ replayed answer (same run, nothing inserted)")),
    (Arrow.REFUSED, N_("✗ refused (error raised, or 4xx)")),
    (Arrow.THROUGH, N_("⚠ went through, though the lesson forbids it")),
]


def text_width(text: str) -> float:
    """How wide a text is drawn, in px: its columns (a Chinese character takes two)."""
    return wcwidth.width(text) * CHAR_WIDTH


def tag_of(kind: Arrow, note: str = "") -> str:
    """The words that mark an arrow of this kind, in the page's language ('' for a plain one)."""
    if kind == Arrow.THROUGH and note in NOTE_TAGS:
        return _(NOTE_TAGS[note])
    return _(TAGS[kind]) if TAGS.get(kind) else ""


def draw_legend() -> list[tuple[Arrow, str, int, int]]:
    """Each legend entry with its x and y: a sample arrow, its words, a gap; wraps once full."""
    placed, x, y = [], 10, 14
    for kind, words in LEGEND_WORDS:
        shown = _(words)
        width = 48 + round(text_width(shown)) + 22
        if x + width > WIDTH:
            x, y = 10, y + 18
        placed.append((kind, shown, x, y))
        x += width
    return placed


@dataclass(frozen=True)
class PlacedArrow:
    """One event: a horizontal arrow from one lane to another at height y."""

    step: int
    y: int
    x1: int
    x2: int
    kind: Arrow
    tag: str  # the words that mark a replay, a refusal or an error ('' for the others)
    lines: tuple[str, ...]  # tag and label, wrapped to fit; the last line sits on the arrow
    title: str  # tag and label on one line, for the tooltip
    source: str = ""  # the lanes it goes from and to, for the table of steps
    target: str = ""
    said: str = ""  # the trace's own words
    note: str = ""  # why it is marked, or what it did, in the page's language

    @property
    def label(self) -> str:
        """The whole label on one line, its tag first."""
        return " ".join(self.lines)

    @property
    def said_lines(self) -> tuple[str, ...]:
        """The lines without the tag that starts the first one: the trace's own words."""
        if not self.tag:
            return self.lines
        return (self.lines[0][len(self.tag) + 1 :], *self.lines[1:])

    @property
    def text_x(self) -> int:
        """Labels start just right of the arrow's left end."""
        return min(self.x1, self.x2) + 8

    @property
    def text_y(self) -> int:
        """The baseline of the label's first line: the last one sits just above the arrow."""
        return self.y - 6 - (len(self.lines) - 1) * LINE

    @property
    def top(self) -> int:
        """The top of the arrow's row, where its highlight band starts."""
        return self.text_y - 16


@dataclass(frozen=True)
class Diagram:
    """A whole sequence diagram: size, lane positions, arrows, and what was left out."""

    width: int
    height: int
    lanes: list[tuple[str, int]]
    arrows: list[PlacedArrow]
    omitted: int
    legend: list[tuple[Arrow, str, int, int]]

    @property
    def lane_bottom(self) -> int:
        """Where the lane lines end."""
        return self.height - 10

    @property
    def line_gap(self) -> int:
        """From one wrapped line of a label to the next."""
        return LINE

    def has(self, kind: str) -> bool:
        """True when some arrow is of this kind (a replay, a refusal…)."""
        return any(a.kind == kind for a in self.arrows)


def lane_x(lane: str) -> int:
    """The x of a lane's vertical line; unknown lanes go to the client's."""
    index = LANES.index(lane) if lane in LANES else 0
    return LEFT + index * LANE_GAP


def draw_sequence(events: list[dict[str, str]]) -> Diagram:
    """Lay out the events of one trace, in order, one arrow per row (taller when wrapped).

    Called while a page is made: the tags and the legend are in that page's language.
    """
    arrows = []
    y = TOP
    for step, event in enumerate(events[:MAX_ARROWS], start=1):
        x1, x2 = lane_x(event["source"]), lane_x(event["target"])
        if x1 == x2:  # a lane talking to itself: a short arrow to the right
            x2 = x1 + 40
        kind = Arrow(event["kind"]) if event["kind"] in TAGS else Arrow.CALL
        note = event.get("note", "")
        note = _(note) if note in NOTES else ""
        tag = tag_of(kind, event.get("note", ""))
        label = f"{event['label']} ({note})" if note else event["label"]
        room = int((WIDTH - 8 - (min(x1, x2) + 8)) / CHAR_WIDTH)
        lines = wrap_label(label, room, tag)
        y += ROW + (len(lines) - 1) * LINE
        title = f"{tag} {label}" if tag else label
        arrows.append(
            PlacedArrow(
                step,
                y,
                x1,
                x2,
                kind,
                tag,
                lines,
                title,
                event["source"],
                event["target"],
                event["label"],
                note,
            )
        )
    height = y + ROW
    return Diagram(
        WIDTH,
        height,
        [(lane, lane_x(lane)) for lane in LANES],
        arrows,
        omitted=max(0, len(events) - MAX_ARROWS),
        legend=draw_legend(),
    )


def wrap_label(text: str, room: int, tag: str = "") -> tuple[str, ...]:
    """The label cut into lines of at most room columns, at spaces where it can be.

    A tag starts the first line, whole. Columns, not characters: a Chinese character
    takes two (wcwidth), so a Chinese label gets half as many characters a line.
    """
    start = f"{tag} " if tag else ""
    lines = wrap(" ".join(text.split()), max(room, 8), start, "")
    return tuple(lines) or (tag,)
