"""Triggers, exact output: default, continuous, count, purging and user triggers."""

from __future__ import annotations

import pytest

from funke.semantics.clock import ManualClock
from funke.semantics.state import ReducingStateDescriptor
from funke.semantics.time import MAX_WATERMARK
from funke.semantics.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
    TriggerResult,
)
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import EventTimeSessionWindows, TumblingEventTimeWindows

from .support import results, values


def count_op(spec: WindowSpec, clock: ManualClock | None = None) -> WindowOperator:
    return WindowOperator(spec, WindowAggregate.count(), clock=clock)


def test_trigger_result_flags():
    flags = {r.name: (r.fire, r.purge) for r in TriggerResult}
    assert flags == {
        "CONTINUE": (False, False),
        "FIRE": (True, False),
        "PURGE": (False, True),
        "FIRE_AND_PURGE": (True, True),
    }
    assert TriggerResult.FIRE_AND_PURGE.is_fire() and TriggerResult.FIRE_AND_PURGE.is_purge()


def test_default_event_time_trigger_fires_once_watermark_passes_window_end():
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(10)))
    for key, ts in [("a", 1), ("a", 5), ("b", 7), ("a", 12)]:
        assert op.process_element(key, "x", ts) == []
    assert op.advance_watermark(8) == []
    fired = op.advance_watermark(9)
    assert results(fired) == [("a", 0, 10, 2), ("b", 0, 10, 1)]
    assert [r.timestamp for r in fired] == [9, 9]  # window end - 1
    assert results(op.advance_watermark(MAX_WATERMARK)) == [("a", 10, 20, 1)]
    assert op.snapshot()["state"] == [] and op.snapshot()["timers"] == []


def test_watermark_never_goes_back():
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(10)))
    op.advance_watermark(20)
    op.advance_watermark(5)
    assert op.current_watermark == 20


def test_continuous_event_time_trigger_fires_at_aligned_intervals_and_at_window_end():
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(20), trigger=ContinuousEventTimeTrigger.of(5)))
    op.process_element("a", "x", 1)  # first fire time: aligned 0 + 5
    op.process_element("a", "x", 3)
    assert values(op.advance_watermark(4)) == []
    assert values(op.advance_watermark(5)) == [2]
    op.process_element("a", "x", 7)
    assert values(op.advance_watermark(12)) == [3]  # the timer at 10
    # 15 fires by interval, 19 is the window's end (next fire is capped there, one timer)
    fired = op.advance_watermark(19)
    assert values(fired) == [3, 3]
    assert [r.timestamp for r in fired] == [19, 19]
    assert op.snapshot()["state"] == [] and op.snapshot()["timers"] == []


def test_continuous_event_time_trigger_fires_late_elements_immediately():
    spec = WindowSpec.of(TumblingEventTimeWindows.of(20), trigger=ContinuousEventTimeTrigger.of(5), allowed_lateness=10)
    op = count_op(spec)
    op.process_element("a", "x", 1)
    assert values(op.advance_watermark(19)) == [1, 1, 1, 1]  # 5, 10, 15, 19
    assert values(op.process_element("a", "x", 2)) == [2]


def test_continuous_processing_time_trigger_gives_early_firings_until_window_end():
    clock = ManualClock(0)
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(500), trigger=ContinuousProcessingTimeTrigger.of(100)), clock)
    op.process_element("a", "x", 10)
    assert values(op.advance_processing_time(99)) == []
    assert values(op.advance_processing_time(100)) == [1]
    clock.advance_to(150)
    op.process_element("a", "x", 20)
    assert values(op.advance_processing_time(250)) == [2]
    # 300, 400 by interval, then 499 = the window's end: no re-arming after that
    assert values(op.advance_processing_time(499)) == [2, 2, 2]
    assert values(op.advance_processing_time(5_000)) == []
    # The event-time cleanup at the window end clears contents; this trigger never fires on watermarks.
    assert values(op.advance_watermark(499)) == []
    assert op.snapshot()["state"] == []


def test_processing_time_trigger_on_event_time_window_fires_by_clock():
    clock = ManualClock(0)
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=ProcessingTimeTrigger.create()), clock)
    op.process_element("a", "x", 5)
    assert values(op.advance_watermark(MAX_WATERMARK)) == []  # cleanup, no firing
    op2 = count_op(WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=ProcessingTimeTrigger.create()), ManualClock(0))
    op2.process_element("a", "x", 5)
    assert values(op2.advance_processing_time(99)) == [1]


def test_count_trigger_fires_every_n_elements_without_purging():
    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=CountTrigger.of(2)))
    assert [values(op.process_element("a", "x", ts)) for ts in (1, 2, 3, 4)] == [[], [2], [], [4]]
    assert values(op.advance_watermark(99)) == []  # CountTrigger ignores time; cleanup drops the window
    assert [values(op.process_element("a", "x", ts)) for ts in (150, 160)] == [[], [2]]


def test_purging_count_trigger_restarts_contents_after_each_firing():
    op = WindowOperator(
        WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=PurgingTrigger.of(CountTrigger.of(2))),
        WindowAggregate.sum(),
    )
    assert [values(op.process_element("a", v, v)) for v in (1, 2, 3, 4)] == [[], [3], [], [7]]


def test_purging_event_time_trigger_late_firing_holds_only_late_elements():
    spec = WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=PurgingTrigger.of(EventTimeTrigger()), allowed_lateness=50)
    op = count_op(spec)
    op.process_element("a", "x", 1)
    op.process_element("a", "x", 2)
    assert values(op.advance_watermark(99)) == [2]
    assert values(op.process_element("a", "x", 3)) == [1]


class EarlyEveryNThenEventTime(Trigger):
    """User trigger: an early firing every n elements, the on-time firing, and a firing per late element."""

    _count = ReducingStateDescriptor("early-count", lambda a, b: a + b)

    def __init__(self, n: int) -> None:
        self.n = n

    def on_element(self, element, timestamp, window, ctx):
        if window.max_timestamp <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp)
        count = ctx.get_partitioned_state(self._count)
        count.add(1)
        return TriggerResult.FIRE if count.get() % self.n == 0 else TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.FIRE if time == window.max_timestamp else TriggerResult.CONTINUE

    def clear(self, window, ctx):
        ctx.delete_event_time_timer(window.max_timestamp)
        ctx.get_partitioned_state(self._count).clear()


def test_user_trigger_early_on_time_and_late_firings_with_allowed_lateness():
    spec = WindowSpec.of(TumblingEventTimeWindows.of(100), trigger=EarlyEveryNThenEventTime(2), allowed_lateness=50)
    op = WindowOperator(spec, WindowAggregate.sum())
    assert values(op.process_element("a", 1, 10)) == []
    assert values(op.process_element("a", 2, 20)) == [3]  # early
    assert values(op.process_element("a", 3, 30)) == []
    assert values(op.advance_watermark(99)) == [6]  # on time
    assert values(op.process_element("a", 4, 40)) == [10]  # late, within lateness
    assert values(op.advance_watermark(149)) == []  # cleanup
    assert op.snapshot()["state"] == [] and op.snapshot()["timers"] == []
    assert values(op.process_element("a", 5, 50)) == []  # too late now
    assert op.num_late_records_dropped == 1


def test_trigger_must_return_a_trigger_result():
    class Sloppy(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            return True

    op = count_op(WindowSpec.of(TumblingEventTimeWindows.of(10), trigger=Sloppy()))
    with pytest.raises(TypeError, match="Sloppy.on_element must return a TriggerResult"):
        op.process_element("a", "x", 1)


def test_merging_windows_need_a_mergeable_trigger():
    class NoMerge(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            return TriggerResult.CONTINUE

    with pytest.raises(ValueError, match="cannot merge"):
        WindowSpec.of(EventTimeSessionWindows.with_gap(10), trigger=NoMerge())


def test_trigger_base_requires_on_element_and_validates_builtins():
    with pytest.raises(NotImplementedError, match="on_element"):
        Trigger().on_element(None, 0, None, None)
    with pytest.raises(ValueError, match="positive"):
        CountTrigger.of(0)
    with pytest.raises(ValueError, match="positive"):
        ContinuousEventTimeTrigger.of(0)
    with pytest.raises(TypeError, match="PurgingTrigger"):
        PurgingTrigger.of("count")


def test_builtin_triggers_are_comparable_values():
    assert PurgingTrigger.of(CountTrigger.of(3)) == PurgingTrigger(CountTrigger(3))
    assert ContinuousEventTimeTrigger.of(5) != ContinuousEventTimeTrigger.of(6)
    assert hash(EventTimeTrigger()) == hash(EventTimeTrigger.create())
