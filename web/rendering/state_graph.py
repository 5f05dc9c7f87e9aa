"""Laying out the run state machine: states as boxes, allowed moves as arrows.

Counts come from the journal: how many runs sit in each state, how many
moves went along each edge, and how many attempts were refused (or, on the
starter, went through although the allowlist forbids them). Geometry only;
templates/partials/state_graph.html draws it.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from ..workbench.journal import AttemptOutcome

WIDTH, HEIGHT = 820, 330
HALF_W, HALF_H = 62, 24
NODES: dict[str, tuple[int, int]] = {
    "pending": (85, 165),
    "running": (275, 165),
    "streaming": (465, 165),
    "done": (715, 165),
    "cancelled": (415, 42),
    "failed": (415, 290),
}
# A few edges need a bend to stay off the boxes between their ends.
BENDS: dict[tuple[str, str], tuple[int, int]] = {("running", "done"): (490, 62)}


@dataclass(frozen=True)
class Node:
    """A state box and how many runs are in it now."""

    name: str
    x: int
    y: int
    count: int
    terminal: bool


@dataclass(frozen=True)
class Edge:
    """A move between two states, with what the journal says about it."""

    source: str
    target: str
    path: str
    label_x: int
    label_y: int
    allowed: bool
    accepted: int
    refused: int
    illegal: int

    @property
    def style(self) -> str:
        """allowed, refused (only refusals seen) or illegal (a forbidden move went through)."""
        if self.illegal:
            return "illegal"
        if not self.allowed:
            return "refused"
        return "used" if self.accepted else "allowed"


@dataclass(frozen=True)
class Graph:
    """The whole state-machine picture."""

    width: int
    height: int
    nodes: list[Node]
    edges: list[Edge]


def _clip(center: tuple[float, float], toward: tuple[float, float]) -> tuple[float, float]:
    """The point where the line from a box's center toward a point leaves the box."""
    dx, dy = toward[0] - center[0], toward[1] - center[1]
    if dx == 0 and dy == 0:
        return center
    scale = min(HALF_W / abs(dx) if dx else math.inf, HALF_H / abs(dy) if dy else math.inf)
    return center[0] + dx * scale, center[1] + dy * scale


def _bend(source: str, target: str, allowed: bool) -> tuple[float, float]:
    (x1, y1), (x2, y2) = NODES[source], NODES[target]
    if (source, target) in BENDS:
        return BENDS[(source, target)]
    mid = ((x1 + x2) / 2, (y1 + y2) / 2)
    if allowed:
        return mid  # straight
    # A forbidden move curves away from the allowed arrows, to its right.
    length = math.hypot(x2 - x1, y2 - y1) or 1
    offset = 75
    return mid[0] + (y2 - y1) / length * offset, mid[1] + (x1 - x2) / length * offset


def _edge(source: str, target: str, allowed: bool, counts: Counter[AttemptOutcome]) -> Edge:
    control = _bend(source, target, allowed)
    start = _clip(NODES[source], control)
    end = _clip(NODES[target], control)
    label = (
        0.25 * start[0] + 0.5 * control[0] + 0.25 * end[0],
        0.25 * start[1] + 0.5 * control[1] + 0.25 * end[1],
    )
    path = (
        f"M{start[0]:.0f},{start[1]:.0f} "
        f"Q{control[0]:.0f},{control[1]:.0f} {end[0]:.0f},{end[1]:.0f}"
    )
    return Edge(
        source,
        target,
        path,
        round(label[0]),
        round(label[1]),
        allowed,
        counts[AttemptOutcome.ACCEPTED],
        counts[AttemptOutcome.REFUSED],
        counts[AttemptOutcome.ILLEGAL],
    )


def draw_graph(
    allowed: dict[str, list[str]],
    in_state: Counter[str],
    attempts: dict[tuple[str, str], Counter[AttemptOutcome]],
) -> Graph:
    """Lay out every allowed edge, plus every forbidden one somebody attempted."""
    nodes = [
        Node(name, x, y, in_state[name], not allowed.get(name)) for name, (x, y) in NODES.items()
    ]
    edges = [
        _edge(s, t, True, attempts.get((s, t), Counter()))
        for s, targets in allowed.items()
        for t in targets
    ]
    edges += [
        _edge(s, t, False, counts)
        for (s, t), counts in sorted(attempts.items())
        if t not in allowed.get(s, []) and s in NODES and t in NODES
    ]
    return Graph(WIDTH, HEIGHT, nodes, edges)
