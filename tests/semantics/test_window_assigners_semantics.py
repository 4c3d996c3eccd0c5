"""Processing-time assigners, default triggers, window merging helpers, operator snapshot/restore."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from funke.semantics.clock import ManualClock
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.triggers import EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import (
    CumulativeEventTimeWindows,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessingTimeSessionWindows,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    merge_time_windows,
)

from .support import results


def test_processing_time_assigners_assign_by_the_time_they_are_given():
    assert TumblingProcessingTimeWindows.of(10_000).assign_windows(12_345) == [TimeWindow(10_000, 20_000)]
    assert SlidingProcessingTimeWindows.of(10_000, 5_000).assign_windows(12_345) == [
        TimeWindow(10_000, 20_000),
        TimeWindow(5_000, 15_000),
    ]
    assert ProcessingTimeSessionWindows.with_gap(5).assign_windows(100) == [TimeWindow(100, 105)]
    dynamic = ProcessingTimeSessionWindows.with_dynamic_gap(lambda e: e)
    assert dynamic.assign_windows(100, 7) == [TimeWindow(100, 107)] and dynamic.is_dynamic


def test_processing_time_assigners_are_not_event_time_and_have_their_own_kind():
    for assigner in (
        TumblingProcessingTimeWindows.of(10),
        SlidingProcessingTimeWindows.of(10, 5),
        ProcessingTimeSessionWindows.with_gap(10),
    ):
        assert assigner.is_event_time is False
        assert assigner.kind.endswith("processing_time")
    assert ProcessingTimeSessionWindows.with_gap(10).is_merging


def test_windows_for_reads_the_clock_for_processing_time_and_the_timestamp_for_event_time():
    assert TumblingProcessingTimeWindows.of(10).windows_for(3, None, 25) == [TimeWindow(20, 30)]
    assert TumblingEventTimeWindows.of(10).windows_for(3, None, 25) == [TimeWindow(0, 10)]
    with pytest.raises(ValueError, match="no timestamp"):
        SlidingEventTimeWindows.of(10, 5).windows_for(None, None, 25)


@pytest.mark.parametrize(
    ("assigner", "trigger"),
    [
        (TumblingEventTimeWindows.of(10), EventTimeTrigger()),
        (SlidingEventTimeWindows.of(10, 5), EventTimeTrigger()),
        (EventTimeSessionWindows.with_gap(10), EventTimeTrigger()),
        (TumblingProcessingTimeWindows.of(10), ProcessingTimeTrigger()),
        (SlidingProcessingTimeWindows.of(10, 5), ProcessingTimeTrigger()),
        (ProcessingTimeSessionWindows.with_gap(10), ProcessingTimeTrigger()),
        (GlobalWindows.create(), NeverTrigger()),
    ],
)
def test_default_triggers_match_flink(assigner, trigger):
    assert assigner.default_trigger() == trigger
    assert WindowSpec.of(assigner).effective_trigger == trigger


def test_assigner_validation_messages():
    with pytest.raises(ValueError, match="window size must be positive"):
        TumblingProcessingTimeWindows.of(0)
    with pytest.raises(ValueError, match="session gap must be positive"):
        ProcessingTimeSessionWindows.with_gap(0)
    with pytest.raises(TypeError, match="not a merging window assigner"):
        TumblingEventTimeWindows.of(10).merge_windows([])


def test_merge_time_windows_groups_what_overlaps_or_touches():
    groups = merge_time_windows([TimeWindow(30, 40), TimeWindow(0, 10), TimeWindow(5, 12), TimeWindow(12, 15)])
    assert groups == [(TimeWindow(0, 15), [TimeWindow(0, 10), TimeWindow(5, 12), TimeWindow(12, 15)])]
    assert merge_time_windows([TimeWindow(0, 10), TimeWindow(11, 20)]) == []


def test_sliding_processing_time_windows_fire_each_window_by_the_clock():
    clock = ManualClock(12)
    op = WindowOperator(WindowSpec.of(SlidingProcessingTimeWindows.of(10, 5)), WindowAggregate.count(), clock=clock)
    op.process_element("a", "x")  # now 12: windows [10,20) and [5,15)
    assert results(op.advance_processing_time(14)) == [("a", 5, 15, 1)]
    assert results(op.advance_processing_time(19)) == [("a", 10, 20, 1)]


def test_window_operator_snapshot_restore_mid_stream_gives_the_same_results():
    spec = WindowSpec.of(EventTimeSessionWindows.with_gap(10), allowed_lateness=20)

    def feed(op, events):
        out = []
        for kind, *args in events:
            out += op.process_element(*args) if kind == "e" else op.advance_watermark(args[0])
        return results(out)

    before = [("e", "a", 1, 0), ("e", "b", 2, 3), ("e", "a", 3, 20), ("w", 12)]
    after = [("e", "a", 4, 10), ("e", "b", 5, 50), ("w", 40), ("e", "a", 6, 30), ("w", MAX_WATERMARK)]
    whole = WindowOperator(spec, WindowAggregate.sum())
    expected = feed(whole, before + after)

    first = WindowOperator(spec, WindowAggregate.sum())
    head = feed(first, before)
    second = WindowOperator(spec, WindowAggregate.sum())
    second.restore(first.snapshot())
    assert head + feed(second, after) == expected
    assert expected == [
        ("a", 0, 10, 1),
        ("b", 3, 13, 2),
        ("a", 0, 30, 8),  # 10 bridges the fired [0,10) and [20,30), within lateness
        ("a", 0, 40, 14),  # 30 extends the session after its end passed: fires at once
        ("b", 50, 60, 5),
    ]


@given(
    t=st.integers(-10**12, 10**12),
    step=st.integers(1, 10_000),
    steps=st.integers(1, 20),
    offset_steps=st.integers(0, 19),
)
def test_cumulative_windows_share_their_period_start_and_end_step_apart_after_the_element(t, step, steps, offset_steps):
    size = step * steps
    offset = (offset_steps % steps) * step
    windows = CumulativeEventTimeWindows.of(size, step, offset).assign_windows(t)
    period = TumblingEventTimeWindows.of(size, offset).assign_windows(t)[0]
    assert windows and all(w.start == period.start for w in windows)
    assert [w.end for w in windows] == list(range(windows[0].end, period.end + 1, step))
    assert windows[-1].end == period.end and windows[0].end - step <= t < windows[0].end


def test_cumulative_window_validation_and_a_late_element_counts_in_the_windows_not_fired():
    with pytest.raises(ValueError, match="multiple of its step"):
        CumulativeEventTimeWindows.of(10, 3)
    with pytest.raises(ValueError, match="step must be positive"):
        CumulativeEventTimeWindows.of(10, 0)
    op = WindowOperator(WindowSpec.of(CumulativeEventTimeWindows.of(3_000, 1_000)), WindowAggregate.count())
    out = []
    for ts in (100, 1_500):
        out += op.process_element("k", ts, ts)
    out += op.advance_watermark(1_999)  # [0, 1 s) and [0, 2 s) are complete
    out += op.process_element("k", 200, 200)  # late for both, counts in [0, 3 s)
    out += op.advance_watermark(MAX_WATERMARK)
    assert [(w0, w1, v) for _, w0, w1, v in results(out)] == [(0, 1_000, 1), (0, 2_000, 2), (0, 3_000, 3)]
