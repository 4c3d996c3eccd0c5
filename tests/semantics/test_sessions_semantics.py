"""Session windows: merging (MergingWindowSet semantics), bridging, touching, dynamic gaps."""

from __future__ import annotations

import pytest

from funke.semantics.clock import ManualClock
from funke.semantics.functions import ProcessWindowFunction
from funke.semantics.merging import MergingWindowSet
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.triggers import CountTrigger
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowProcess, WindowReduce, WindowSpec
from funke.semantics.windows import (
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
    TimeWindow,
    merge_time_windows,
)

from .support import results


def session_count(gap: int = 10, lateness: int = 0) -> WindowOperator:
    return WindowOperator(
        WindowSpec.of(EventTimeSessionWindows.with_gap(gap), allowed_lateness=lateness), WindowAggregate.count()
    )


def test_late_element_bridging_two_sessions_merges_them_and_fires_all_contents():
    op = session_count(gap=10, lateness=100)
    op.process_element("a", "x", 0)
    op.process_element("a", "y", 20)
    assert results(op.advance_watermark(15)) == [("a", 0, 10, 1)]  # the first session is complete
    assert op.process_element("a", "bridge", 10) == []  # [10,20) touches both: one session [0,30)
    pending = op.snapshot()["timers"]
    assert [(t["namespace"], t["timestamp"]) for t in pending] == [("window:0:30", 29), ("window:0:30", 129)]
    assert results(op.advance_watermark(29)) == [("a", 0, 30, 3)]
    op.advance_watermark(129)
    assert op.snapshot()["state"] == [] and op.snapshot()["timers"] == []


def test_bridging_element_after_the_merged_end_passed_fires_immediately():
    op = session_count(gap=10, lateness=100)
    op.process_element("a", "x", 0)
    op.process_element("a", "y", 20)
    assert results(op.advance_watermark(40)) == [("a", 0, 10, 1), ("a", 20, 30, 1)]
    assert results(op.process_element("a", "bridge", 10)) == [("a", 0, 30, 3)]


def test_touching_sessions_merge_and_gapped_ones_do_not():
    op = session_count(gap=10)
    for ts in (0, 10, 31):
        op.process_element("a", "x", ts)
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("a", 0, 20, 2), ("a", 31, 41, 1)]


def test_element_at_the_end_of_an_already_fired_session_starts_a_new_one():
    # Flink's behaviour: the fired session [0,10) is cleaned up at watermark 9, so an
    # element at 10 (not late: 10 > 9) cannot touch it any more.
    op = session_count(gap=10)
    op.process_element("a", "x", 0)
    assert results(op.advance_watermark(9)) == [("a", 0, 10, 1)]
    op.process_element("a", "x", 10)
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("a", 10, 20, 1)]


def test_dynamic_gap_comes_from_each_element():
    assigner = EventTimeSessionWindows.with_dynamic_gap(lambda e: e["gap"])
    op = WindowOperator(WindowSpec.of(assigner), WindowAggregate.count())
    op.process_element("a", {"gap": 5}, 0)  # [0,5)
    op.process_element("a", {"gap": 20}, 3)  # [3,23) -> [0,23)
    op.process_element("a", {"gap": 1}, 30)  # [30,31)
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("a", 0, 23, 2), ("a", 30, 31, 1)]


def test_session_contents_merge_for_reduce_and_process():
    reduce_op = WindowOperator(WindowSpec.of(EventTimeSessionWindows.with_gap(10)), WindowReduce(lambda a, b: a + b))

    class Collect(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            yield sorted(elements)

    process_op = WindowOperator(WindowSpec.of(EventTimeSessionWindows.with_gap(10)), WindowProcess(Collect()))
    for op in (reduce_op, process_op):
        for value, ts in [(1, 0), (2, 20), (4, 10), (8, 100)]:
            op.process_element("k", value, ts)
    assert results(reduce_op.advance_watermark(MAX_WATERMARK)) == [("k", 0, 30, 7), ("k", 100, 110, 8)]
    assert results(process_op.advance_watermark(MAX_WATERMARK)) == [("k", 0, 30, [1, 2, 4]), ("k", 100, 110, [8])]


def test_trigger_state_merges_with_the_sessions():
    op = WindowOperator(
        WindowSpec.of(EventTimeSessionWindows.with_gap(10), trigger=CountTrigger.of(3)), WindowAggregate.count()
    )
    assert op.process_element("a", "x", 0) == []
    assert op.process_element("a", "x", 20) == []
    # counts 1 + 1 merge, plus the bridging element: 3 -> fire
    assert results(op.process_element("a", "x", 10)) == [("a", 0, 30, 3)]


def test_sessions_of_different_keys_are_independent():
    op = session_count(gap=10)
    op.process_element("a", "x", 0)
    op.process_element("b", "x", 5)
    op.process_element("a", "x", 8)
    op.process_element("b", "x", 40)
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("b", 5, 15, 1), ("a", 0, 18, 2), ("b", 40, 50, 1)]


def test_processing_time_sessions_merge_by_clock():
    clock = ManualClock(0)
    op = WindowOperator(WindowSpec.of(ProcessingTimeSessionWindows.with_gap(10)), WindowAggregate.count(), clock=clock)
    op.process_element("a", "x")
    clock.advance_to(5)
    op.process_element("a", "x")
    assert results(op.advance_processing_time(13)) == []
    assert results(op.advance_processing_time(14)) == [("a", 0, 15, 2)]
    assert op.snapshot()["state"] == []


def test_per_window_state_is_refused_for_merging_windows():
    class UsesWindowState(ProcessWindowFunction):
        def process(self, key, ctx, elements):
            ctx.window_state()
            yield len(elements)

    op = WindowOperator(WindowSpec.of(EventTimeSessionWindows.with_gap(10)), WindowProcess(UsesWindowState()))
    op.process_element("a", "x", 0)
    with pytest.raises(ValueError, match="per-window state is not available with merging"):
        op.advance_watermark(MAX_WATERMARK)


def test_merging_window_set_keeps_the_first_state_window():
    windows = MergingWindowSet(merge_time_windows)
    calls = []

    def record(*args):
        calls.append(args)

    assert windows.add_window(TimeWindow(0, 10), record) == TimeWindow(0, 10)
    assert windows.add_window(TimeWindow(20, 30), record) == TimeWindow(20, 30)
    assert windows.add_window(TimeWindow(2, 5), record) == TimeWindow(0, 10)  # inside: no merge call
    assert calls == []
    assert windows.add_window(TimeWindow(10, 20), record) == TimeWindow(0, 30)
    assert calls == [(TimeWindow(0, 30), [TimeWindow(0, 10), TimeWindow(20, 30)], TimeWindow(0, 10), [TimeWindow(20, 30)])]
    assert windows.mapping == {TimeWindow(0, 30): TimeWindow(0, 10)}
    windows.retire_window(TimeWindow(0, 30))
    with pytest.raises(ValueError, match="not in flight"):
        windows.retire_window(TimeWindow(0, 30))
