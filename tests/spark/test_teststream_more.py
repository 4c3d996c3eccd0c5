"""funke.testing.TestStream on Spark, part two: evictors, count and processing-time triggers, dynamic
sessions, global windows, aggregating state, deleted timers, and bounded = unbounded. Exact outputs,
each derived from Flink's semantics (``WindowOperator``, ``EvictingWindowOperator``, the built-in
triggers and evictors)."""

from __future__ import annotations

import pytest

import funke as fk
from funke.evictors import CountEvictor, DeltaEvictor, TimeEvictor
from funke.functions import AggregateFunction, KeyedProcessFunction, ProcessWindowFunction
from funke.semantics.timers import TimeDomain
from funke.state import AggregatingStateDescriptor, ValueStateDescriptor
from funke.testing import TestStream, run
from funke.triggers import ContinuousProcessingTimeTrigger, CountTrigger, PurgingTrigger
from funke.windows import EventTimeSessionWindows, GlobalWindows, TumblingEventTimeWindows, TumblingProcessingTimeWindows

SCHEMA = "key string, value bigint"


def ms(v):
    return None if v is None else int(v.timestamp() * 1000)


def fired(rows, value="value"):
    """(key, start ms, end ms, value, step) per firing, by step, then window (a window's firings keep their order)."""
    out = [(r["key"], ms(r["window_start"]), ms(r["window_end"]), r[value], r["_step"]) for r in rows]
    return sorted(out, key=lambda f: (f[4], f[0], -1 if f[1] is None else f[1]))


class Seen(ProcessWindowFunction):
    """What the window function was given, in arrival order (an evictor keeps that order)."""

    def process(self, key, ctx, elements):
        yield {"seen": ",".join(str(e["value"]) for e in elements)}


EVICTOR_SCRIPT = (
    # CountTrigger(3) fires the window [0 s, 10 s) twice; what an evictor removes is gone for good
    # (Flink keeps the evicted contents as the window's state, FLINK-4369).
    ([1, 5, 6], [1_000, 2_000, 5_000]),  # 0: first firing
    ([7, 9, 20], [6_000, 7_000, 8_000]),  # 1: second firing
)


def fired_twice(env):
    ts = TestStream(schema=SCHEMA)
    for values, stamps in EVICTOR_SCRIPT:
        ts.add_elements([("k", v) for v in values], timestamps=stamps)
    return env.from_source(ts).key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10))).trigger(CountTrigger.of(3))


W = ("k", 0, 10_000)


def test_time_evictor_before_and_after_and_count_evictor_after(env):
    before = fired_twice(env).evictor(TimeEvictor.of(fk.seconds(3))).process(Seen(), output_schema="seen string")
    after = fired_twice(env).evictor(TimeEvictor.of(fk.seconds(3), do_evict_after=True)).process(Seen(), output_schema="seen string")
    count_after = fired_twice(env).evictor(CountEvictor.of(2, do_evict_after=True)).sum("value")
    result = run(env, before, after, count_after)
    # keeps timestamps > newest - 3 s: 1st firing, newest 5 s -> {6}; 2nd {6,7,9,20}, newest 8 s -> {7,9,20}
    assert fired(result[before], "seen") == [(*W, "6", 0), (*W, "7,9,20", 1)]
    # the function sees everything; the eviction (to {6}) shows in the second firing
    assert fired(result[after], "seen") == [(*W, "1,5,6", 0), (*W, "6,7,9,20", 1)]
    # sums everything, then keeps the last two: 1+5+6, then 5+6 + 7+9+20
    assert fired(result[count_after]) == [(*W, 12, 0), (*W, 47, 1)]


def test_delta_evictor_before_and_after(env):
    distance = lambda a, b: abs(a["value"] - b["value"])  # noqa: E731
    before = fired_twice(env).evictor(DeltaEvictor.of(3, distance)).process(Seen(), output_schema="seen string")
    after = fired_twice(env).evictor(DeltaEvictor.of(3, distance, do_evict_after=True)).process(Seen(), output_schema="seen string")
    result = run(env, before, after)
    # keeps |v - last| < 3: 1st firing, last 6 -> {5,6}; 2nd {5,6,7,9,20}, last 20 -> {20}
    assert fired(result[before], "seen") == [(*W, "5,6", 0), (*W, "20", 1)]
    assert fired(result[after], "seen") == [(*W, "1,5,6", 0), (*W, "5,6,7,9,20", 1)]


SCRIPT = (
    # (values, timestamps) of key "a", or a watermark
    ([1, 3, 1], [1_000, 2_000, 7_000]),  # 0
    4_000,  # 1
    ([5], [4_500]),  # 2
    9_499,  # 3
    ([2, 4], [12_000, 13_000]),  # 4
)


def scripted():
    ts = TestStream(schema=SCHEMA)
    for step in SCRIPT:
        if isinstance(step, int):
            ts.advance_watermark_to(step)
        else:
            ts.add_elements([("a", v) for v in step[0]], timestamps=step[1])
    return ts


def test_count_trigger_on_time_windows_purging_and_on_a_global_window(env):
    keyed = env.from_source(scripted()).key_by("key")
    tumbling = TumblingEventTimeWindows.of(fk.seconds(10))
    count = keyed.window(tumbling).trigger(CountTrigger.of(2)).sum("value")
    purging = keyed.window(tumbling).trigger(PurgingTrigger.of(CountTrigger.of(2))).sum("value")
    everything = keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(2)).sum("value")
    result = run(env, count, purging, everything)
    w0, w1 = ("a", 0, 10_000), ("a", 10_000, 20_000)
    # CountTrigger replaces the event-time trigger: it fires at every 2nd element of a window (1+3;
    # 1+3+1+5; 2+4), never at the window's end (so 1+3+1 is never emitted), and does not purge.
    assert fired(result[count]) == [(*w0, 4, 0), (*w0, 10, 2), (*w1, 6, 4)]
    assert fired(result[purging]) == [(*w0, 4, 0), (*w0, 6, 2), (*w1, 6, 4)]
    # one window for all time, never cleaned up: a running sum at every 2nd element
    assert fired(result[everything]) == [("a", None, None, 4, 0), ("a", None, None, 10, 2), ("a", None, None, 16, 4)]


def gap_of(element):
    """A per-element session gap: ``value`` seconds."""
    return fk.seconds(element["value"])


def test_sessions_with_a_dynamic_gap_bounded_and_unbounded(env, spark, tmp_path):
    # gaps 1 s, 3 s, 1 s: [1 s, 2 s) and [2 s, 5 s) touch -> [1 s, 5 s); [7 s, 8 s) apart (step 0);
    # [4.5 s, 9.5 s) bridges both -> [1 s, 9.5 s) (step 2), complete at watermark 9.499 s (step 3);
    # [12 s, 14 s) + [13 s, 17 s) -> [12 s, 17 s), complete at the end of input
    out = env.from_source(scripted()).key_by("key").window(EventTimeSessionWindows.with_dynamic_gap(gap_of)).sum("value")
    streamed = fired(run(env, out)[out])
    assert streamed == [("a", 1_000, 9_500, 10, 3), ("a", 12_000, 17_000, 6, 5)]

    # The same program over the same events, bounded (one Spark batch job, the watermark +infinity at
    # the end), gives the same sessions.
    bounded_env = fk.StreamEnvironment(app="test-bounded", spark=spark, checkpoint_dir=str(tmp_path / "bounded"))
    again = bounded_env.from_source(scripted()).key_by("key").window(EventTimeSessionWindows.with_dynamic_gap(gap_of)).sum("value")
    assert [f[:4] for f in fired(run(bounded_env, again, bounded=True)[again])] == [f[:4] for f in streamed]


def test_continuous_processing_time_trigger_aligned_and_at_the_window_end(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 1)], timestamps=[0, 0])  # 0: at 0 ms, window [0 s, 5 s); next firing 2 s
        .advance_processing_time(fk.milliseconds(2_300))  # 1: fires at 2 s
        .add_elements([("a", 1)], timestamps=[0])  # 2
        .advance_processing_time(fk.milliseconds(4_200))  # 3: 6.5 s: fires at 4 s, and at the window's end (4.999 s)
        .add_elements([("a", 1)], timestamps=[0])  # 4: at 6.5 s, window [5 s, 10 s); next firing aligned: 8 s, not 8.5 s
        .advance_processing_time(fk.milliseconds(3_500))  # 5: 10 s: fires at 8 s and at 9.999 s
    )
    out = (
        env.from_source(ts).key_by("key")
        .window(TumblingProcessingTimeWindows.of(fk.seconds(5)))
        .trigger(ContinuousProcessingTimeTrigger.of(fk.seconds(2)))
        .count()
    )
    result = run(env, out)
    w0, w1 = ("a", 0, 5_000), ("a", 5_000, 10_000)
    assert fired(result[out], "count") == [(*w0, 2, 1), (*w0, 3, 3), (*w0, 3, 3), (*w1, 1, 5), (*w1, 1, 5)]


class Mean(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, acc):
        return (acc[0] + value, acc[1] + 1)

    def get_result(self, acc):
        return acc[0] / acc[1]

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


class Debounce(KeyedProcessFunction):
    """Each element replaces the key's timers (5 s of event time, 1 s of processing time): the old
    ones are deleted; a negative element deletes them only. Timers report the key's mean so far
    (an AggregatingState), which the event-time timer then clears."""

    def open(self, ctx):
        self.mean = ctx.get_aggregating_state(AggregatingStateDescriptor("mean", Mean()))
        self.event_timer = ctx.get_state(ValueStateDescriptor("event_timer", int))
        self.clock_timer = ctx.get_state(ValueStateDescriptor("clock_timer", int))

    def process_element(self, value, ctx):
        timers = ctx.timer_service()
        if self.event_timer.value() is not None:
            timers.delete_event_time_timer(self.event_timer.value())
        if self.clock_timer.value() is not None:
            timers.delete_processing_time_timer(self.clock_timer.value())
        self.event_timer.clear()
        self.clock_timer.clear()
        key = ctx.get_current_key()
        if value["value"] < 0:
            yield {"key": key, "what": "cancel", "at": ctx.timestamp(), "mean": self.mean.get()}
            return
        self.mean.add(value["value"])
        self.event_timer.update(ctx.timestamp() + 5_000)
        self.clock_timer.update(timers.current_processing_time() + 1_000)
        timers.register_event_time_timer(self.event_timer.value())
        timers.register_processing_time_timer(self.clock_timer.value())
        yield {"key": key, "what": "seen", "at": ctx.timestamp(), "mean": self.mean.get()}

    def on_timer(self, timestamp, ctx):
        row = {"key": ctx.get_current_key(), "at": timestamp, "mean": self.mean.get()}
        if ctx.time_domain() is TimeDomain.EVENT_TIME:
            self.event_timer.clear()
            self.mean.clear()
            yield {**row, "what": "event"}
        else:
            self.clock_timer.clear()
            yield {**row, "what": "clock"}


def test_process_function_aggregating_state_and_deleted_timers(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 10), ("b", 4)], timestamps=[1_000, 1_000])  # 0: timers at 6 s, and 1 s (clock)
        .advance_processing_time(fk.milliseconds(500))  # 1
        .add_elements([("a", 20), ("b", -1)], timestamps=[3_000, 3_000])  # 2: a's timers moved to 8 s / 1.5 s; b's deleted
        .advance_processing_time(fk.seconds(1))  # 3: clock 1.5 s: the deleted 1 s timers stay silent
        .advance_watermark_to(8_000)  # 4: a's 8 s timer, not the deleted 6 s ones; a's mean starts over
        .add_elements([("a", 30)], timestamps=[9_000])  # 5: timers at 14 s / 2.5 s
        .advance_processing_time(fk.seconds(1))  # 6: clock 2.5 s
    )
    out = env.from_source(ts).key_by("key").process(Debounce(), output_schema="key string, what string, at bigint, mean double")
    result = run(env, out)
    got = sorted((r["_step"], r["key"], r["what"], r["at"], r["mean"]) for r in result[out])
    assert got == [
        (0, "a", "seen", 1_000, 10.0),
        (0, "b", "seen", 1_000, 4.0),
        (2, "a", "seen", 3_000, 15.0),
        (2, "b", "cancel", 3_000, 4.0),
        (3, "a", "clock", 1_500, 15.0),
        (4, "a", "event", 8_000, 15.0),
        (5, "a", "seen", 9_000, 30.0),
        (6, "a", "clock", 2_500, 30.0),
        (7, "a", "event", 14_000, 30.0),  # the end of input: the watermark goes to +infinity
    ]


def test_global_window_with_the_end_of_stream_trigger_fires_once_at_the_end(env, spark, tmp_path):
    # Flink 1.19's GlobalWindows.createWithEndOfStreamTrigger(): no firing while the watermark
    # moves (steps 1 and 3), one firing with every element when the input ends (step 5)
    out = env.from_source(scripted()).key_by("key").window(GlobalWindows.create_with_end_of_stream_trigger()).sum("value")
    assert fired(run(env, out)[out]) == [("a", None, None, 16, 5)]
    assert "GlobalWindows(end-of-stream trigger)" in env.explain()
    # the same program over the same elements as a bounded run
    bounded_env = fk.StreamEnvironment(app="eos-bounded", spark=spark, checkpoint_dir=str(tmp_path / "bounded"))
    again = bounded_env.from_source(scripted()).key_by("key").window(GlobalWindows.create_with_end_of_stream_trigger()).sum("value")
    assert [(r["key"], r["value"]) for r in run(bounded_env, again, bounded=True)[again]] == [("a", 16)]


def test_a_job_that_does_not_end_in_time_says_what_spark_and_funke_saw_of_each_query(env):
    # (a job right after execute() has heard of no batch, so a zero timeout always runs out)
    out = env.from_source(scripted()).key_by("key").window(GlobalWindows.create_with_end_of_stream_trigger()).sum("value")
    with pytest.raises(TimeoutError) as e:
        run(env, out, timeout=0)
    said = str(e.value)
    assert "did not finish within 0 s" in said
    for what in ("'spark_last_batch':", "'heard_last_batch':", "'status':", "'ends_heard':"):
        assert what in said, said
