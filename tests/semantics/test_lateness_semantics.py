"""Allowed lateness, late firings, the late-data side output and the dropped-records counter."""

from __future__ import annotations

import pytest

from funke.semantics.functions import OutputTag
from funke.semantics.time import MAX_WATERMARK, seconds
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import SlidingEventTimeWindows, TumblingEventTimeWindows

from .support import results, side

LATE = OutputTag("late", "key string, v long")


def tumbling_count(lateness: int = 0, tag: OutputTag | None = None) -> WindowOperator:
    spec = WindowSpec.of(TumblingEventTimeWindows.of(10), allowed_lateness=lateness, late_data_tag=tag)
    return WindowOperator(spec, WindowAggregate.count())


def test_late_but_allowed_elements_refire_the_window_with_all_contents():
    op = tumbling_count(lateness=5)
    op.process_element("a", "x", 1)
    assert results(op.advance_watermark(9)) == [("a", 0, 10, 1)]
    assert results(op.process_element("a", "y", 2)) == [("a", 0, 10, 2)]
    assert results(op.process_element("a", "z", 9)) == [("a", 0, 10, 3)]
    assert results(op.advance_watermark(14)) == []  # cleanup time = 9 + 5
    assert op.snapshot()["state"] == []


def test_too_late_elements_go_to_the_side_output_with_their_timestamp():
    op = tumbling_count(lateness=5, tag=LATE)
    op.process_element("a", {"v": 1}, 1)
    op.advance_watermark(14)
    out = op.process_element("a", {"v": 2}, 3)
    assert side(out) == [("late", {"v": 2}, 3)]
    assert results(out) == []
    assert op.num_late_records_dropped == 0


def test_too_late_elements_without_a_tag_are_dropped_and_counted():
    op = tumbling_count(lateness=5)
    op.advance_watermark(14)
    assert op.process_element("a", "x", 3) == []
    assert op.process_element("b", "x", 4) == []
    assert op.num_late_records_dropped == 2
    assert results(op.advance_watermark(MAX_WATERMARK)) == []


def test_lateness_boundary_is_inclusive_of_the_watermark():
    op = tumbling_count()
    op.advance_watermark(9)
    assert op.process_element("a", "x", 9) == []  # max_timestamp 9 <= watermark 9: late
    assert op.num_late_records_dropped == 1
    op.process_element("a", "x", 10)  # the next window is still open
    assert results(op.advance_watermark(19)) == [("a", 10, 20, 1)]


def test_an_element_is_late_only_when_all_its_windows_are():
    op = WindowOperator(
        WindowSpec.of(SlidingEventTimeWindows.of(10, 5), late_data_tag=LATE), WindowAggregate.count()
    )
    op.advance_watermark(12)
    out = op.process_element("a", "x", 8)  # [0,10) is late, [5,15) is not
    assert side(out) == []
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("a", 5, 15, 1)]


def test_allowed_lateness_accepts_timedelta_and_rejects_negative():
    spec = WindowSpec.of(TumblingEventTimeWindows.of(seconds(10)), allowed_lateness=seconds(2))
    assert spec.allowed_lateness_ms == 2_000
    with pytest.raises(ValueError, match="allowed lateness must be >= 0"):
        WindowSpec.of(TumblingEventTimeWindows.of(10), allowed_lateness=-1)


def test_event_time_window_needs_a_timestamp():
    op = tumbling_count()
    with pytest.raises(ValueError, match="no timestamp"):
        op.process_element("a", "x", None)
