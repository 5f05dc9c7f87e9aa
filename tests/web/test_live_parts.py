"""What changed between two drawings of the runs page: the parts, and the rows by id."""

from __future__ import annotations

from web.rendering.live_parts import Drawing, Remembered, Seen, changes


def seen(parts: dict[str, str], rows: list[tuple[str, str]]) -> Seen:
    return Drawing(parts, rows).fingerprint()


BEFORE = seen({"graph": "g1", "table": "frame"}, [("b", "B1"), ("a", "A1")])


def test_nothing_changed_sends_nothing() -> None:
    found = changes(BEFORE, BEFORE, rows_in="table")
    assert (found.parts, found.added, found.changed, found.removed) == ([], [], [], [])


def test_a_changed_row_and_a_changed_part_go_alone() -> None:
    now = seen({"graph": "g2", "table": "frame"}, [("b", "B1"), ("a", "A2")])
    found = changes(BEFORE, now, rows_in="table")
    assert (found.parts, found.added, found.changed, found.removed) == (["graph"], [], ["a"], [])


def test_new_rows_go_on_top_and_rows_past_the_page_go() -> None:
    now = seen({"graph": "g1", "table": "frame"}, [("d", "D"), ("c", "C"), ("b", "B2")])
    found = changes(BEFORE, now, rows_in="table")
    assert (found.added, found.changed, found.removed) == (["d", "c"], ["b"], ["a"])
    assert found.parts == []


def test_rows_in_another_order_send_the_table_whole() -> None:
    now = seen({"graph": "g1", "table": "frame"}, [("a", "A1"), ("b", "B1")])
    assert changes(BEFORE, now, rows_in="table").parts == ["table"]
    below = seen({"graph": "g1", "table": "frame"}, [("b", "B1"), ("a", "A1"), ("z", "Z")])
    assert changes(BEFORE, below, rows_in="table").parts == ["table"]


def test_a_changed_frame_sends_the_table_whole_and_no_row_alone() -> None:
    now = seen({"graph": "g1", "table": "frame 2"}, [("b", "B2"), ("a", "A1")])
    found = changes(BEFORE, now, rows_in="table")
    assert found.parts == ["table"] and found.changed == []


def test_the_latest_drawings_are_remembered_by_digest_and_the_oldest_forgotten() -> None:
    remembered = Remembered(size=2)
    first = remembered.remember(BEFORE)
    assert remembered.get(first) == BEFORE and remembered.get("nope") is None
    remembered.remember(seen({"graph": "x"}, []))
    remembered.remember(seen({"graph": "y"}, []))
    assert remembered.get(first) is None and remembered.get(None) is None
