"""funke.testing.TestStream on Spark: scripted elements, watermarks and processing time, exact outputs."""

from __future__ import annotations

import funke as fk
from funke.evictors import CountEvictor
from funke.functions import KeyedProcessFunction, OutputTag
from funke.state import ListStateDescriptor, MapStateDescriptor, ReducingStateDescriptor, StateTtlConfig, ValueStateDescriptor
from funke.testing import TestStream, assert_rows, run
from funke.triggers import ContinuousEventTimeTrigger, EventTimeTrigger, PurgingTrigger
from funke.windows import EventTimeSessionWindows, TumblingEventTimeWindows

SCHEMA = "key string, value bigint"


def ms(rows, *cols):
    """window_start/window_end as epoch ms, for readable expectations."""
    out = []
    for r in rows:
        r = dict(r)
        for c in cols or ("window_start", "window_end"):
            if r.get(c) is not None:
                r[c] = int(r[c].timestamp() * 1000)
        out.append(r)
    return out


def test_api_example_default_trigger_and_late_side_output(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 2)], timestamps=[1_000, 2_000])
        .advance_watermark_to(9_999)
        .add_elements([("a", 3)], timestamps=[500])  # late
        .advance_processing_time(fk.seconds(1))
        .advance_watermark_to_infinity()
    )
    late = OutputTag("late", SCHEMA)
    out = env.from_source(ts).key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10))).side_output_late_data(late).sum("value")
    result = run(env, out, late)
    assert ms(result[out]) == [{"key": "a", "window_start": 0, "window_end": 10_000, "value": 3, "_step": 1}]
    assert [(r["key"], r["value"], r["_step"]) for r in result[late]] == [("a", 3, 2)]


def windows(rows, value="value"):
    """(key, start ms, end ms, value, step) tuples, in emission order per key."""
    out = []
    for r in ms(rows):
        out.append((r["key"], r["window_start"], r["window_end"], r[value], r["_step"]))
    return sorted(out, key=lambda t: (t[0], t[4], t[1] if t[1] is not None else -1))


def test_early_on_time_and_late_firings_and_purging(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 1)], timestamps=[1_000, 3_000])  # 0
        .advance_watermark_to(4_000)  # 1: early firings (continuous, every 2 s of event time)
        .add_elements([("a", 1)], timestamps=[5_000])  # 2
        .advance_watermark_to(12_000)  # 3: early at 6 and 8 s, then on time at the window's end
        .add_elements([("a", 1)], timestamps=[2_500])  # 4: late but allowed: late firing
        .advance_watermark_to(20_000)  # 5: past the lateness: window state dropped
        .add_elements([("a", 1)], timestamps=[2_600])  # 6: too late: dropped and counted
    )
    keyed = env.from_source(ts).key_by("key")
    tumbling = TumblingEventTimeWindows.of(fk.seconds(10))
    early = keyed.window(tumbling).trigger(ContinuousEventTimeTrigger.of(fk.seconds(2))).allowed_lateness(fk.seconds(5)).sum("value")
    purging = keyed.window(tumbling).trigger(PurgingTrigger.of(EventTimeTrigger.create())).allowed_lateness(fk.seconds(5)).sum("value")
    result = run(env, early, purging)
    w = (0, 10_000)
    assert windows(result[early]) == [
        ("a", *w, 2, 1), ("a", *w, 2, 1),  # timers at 2 s and 4 s (4 s <= watermark 4 s)
        ("a", *w, 3, 3), ("a", *w, 3, 3), ("a", *w, 3, 3),  # 6 s, 8 s, and the window's end
        ("a", *w, 4, 4),  # a late element re-fires at once
    ]
    # purged at each firing: the late firing holds only the late element
    assert windows(result[purging]) == [("a", *w, 3, 3), ("a", *w, 1, 4)]
    assert result.metrics["late_rows_dropped"] == 2  # the last element, once per pipeline


def test_sessions_merge_when_touching_and_when_a_late_element_bridges_them(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 1), ("b", 1), ("b", 1)], timestamps=[1_000, 6_000, 10_000, 13_000])  # 0
        .advance_watermark_to(4_500)  # 1: a's first session [1 s, 4 s) fires
        .add_elements([("a", 1)], timestamps=[3_500])  # 2: late, allowed; bridges [1,4) and [6,9)
        .advance_watermark_to_infinity()  # 3
    )
    out = (
        env.from_source(ts).key_by("key")
        .window(EventTimeSessionWindows.with_gap(fk.seconds(3)))
        .allowed_lateness(fk.seconds(10))
        .sum("value")
    )
    result = run(env, out)
    assert windows(result[out]) == [
        ("a", 1_000, 4_000, 1, 1),
        ("a", 1_000, 9_000, 3, 3),
        ("b", 10_000, 16_000, 2, 3),  # [10 s, 13 s) and [13 s, 16 s) touch: one session
    ]


def test_count_windows_tumbling_and_sliding_and_evictor(env):
    ts = TestStream(schema=SCHEMA).add_elements([("c", v) for v in range(1, 8)], timestamps=[v * 1_000 for v in range(1, 8)])
    keyed = env.from_source(ts).key_by("key")
    tumbling = keyed.count_window(3).sum("value")
    sliding = keyed.count_window(3, 2).sum("value")
    evicted = keyed.window(TumblingEventTimeWindows.of(fk.seconds(10))).evictor(CountEvictor.of(2)).sum("value")
    result = run(env, tumbling, sliding, evicted)
    assert [(r["key"], r["value"], r["window_start"]) for r in result[tumbling]] == [("c", 6, None), ("c", 15, None)]
    assert [r["value"] for r in result[sliding]] == [3, 9, 15]
    assert windows(result[evicted]) == [("c", 0, 10_000, 13, 1)]  # the last two of 1..7


NEGATIVE = OutputTag("negative", "key string, value bigint")


class CountWithTimeout(KeyedProcessFunction):
    """Counts per key; an event-time timer 5 s after each element reports the count; negatives go aside."""

    def open(self, ctx):
        self.count = ctx.get_state(ValueStateDescriptor("count", int))

    def process_element(self, value, ctx):
        if value["value"] < 0:
            ctx.output(NEGATIVE, {"key": value["key"], "value": value["value"]})
            return
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 5_000)
        yield {"key": ctx.get_current_key(), "what": "seen", "n": self.count.value(), "at": ctx.timestamp()}

    def on_timer(self, timestamp, ctx):
        yield {"key": ctx.get_current_key(), "what": "timer", "n": self.count.value(), "at": timestamp}


OUT = "key string, what string, n bigint, at bigint"


def test_process_function_event_time_timers_state_and_side_output(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("b", 1), ("a", -3)], timestamps=[1_000, 2_000, 2_500])  # 0
        .advance_watermark_to(5_999)  # 1: a's timer at 6 s not yet
        .add_elements([("a", 1)], timestamps=[4_000])  # 2
        .advance_watermark_to(7_000)  # 3: a@6 s, b@7 s fire
        .advance_watermark_to_infinity()  # 4: a@9 s fires
    )
    out = env.from_source(ts).key_by("key").process(CountWithTimeout(), output_schema=OUT)
    result = run(env, out, NEGATIVE)
    got = sorted((r["_step"], r["key"], r["what"], r["n"], r["at"]) for r in result[out])
    assert got == [
        (0, "a", "seen", 1, 1_000),
        (0, "b", "seen", 1, 2_000),
        (2, "a", "seen", 2, 4_000),
        (3, "a", "timer", 2, 6_000),
        (3, "b", "timer", 1, 7_000),
        (4, "a", "timer", 2, 9_000),
    ]
    assert_rows(result[NEGATIVE], [{"key": "a", "value": -3}])


class Sessionizer(KeyedProcessFunction):
    """Processing-time timers and TTL state, with list, map and reducing state."""

    def open(self, ctx):
        ttl = StateTtlConfig.new_builder(fk.seconds(2)).build()
        self.last = ctx.get_state(ValueStateDescriptor("last", int).enable_time_to_live(ttl))
        self.items = ctx.get_list_state(ListStateDescriptor("items"))
        self.by_value = ctx.get_map_state(MapStateDescriptor("by_value"))
        self.total = ctx.get_reducing_state(ReducingStateDescriptor("total", lambda a, b: a + b))

    def process_element(self, value, ctx):
        previous = self.last.value()
        self.last.update(value["value"])
        self.items.add(value["value"])
        self.by_value.put(str(value["value"]), (self.by_value.get(str(value["value"])) or 0) + 1)
        self.total.add(value["value"])
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 500)
        yield {"key": ctx.get_current_key(), "what": f"prev={previous}", "n": self.total.get(), "at": now}

    def on_timer(self, timestamp, ctx):
        summary = f"items={self.items.get()} distinct={len(list(self.by_value.keys()))}"
        yield {"key": ctx.get_current_key(), "what": summary, "n": self.total.get(), "at": timestamp}


def test_process_function_processing_time_timers_ttl_and_state_types(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 1)], timestamps=[0, 0])  # 0: at processing time 0
        .advance_processing_time(fk.milliseconds(600))  # 1: the timer at 500 ms fires (once: same time)
        .add_elements([("a", 5)], timestamps=[0])  # 2: at 600 ms; `last` still alive
        .advance_processing_time(fk.seconds(3))  # 3: timer at 1.1 s fires; `last` expires at 2.6 s
        .add_elements([("a", 7)], timestamps=[0])  # 4: at 3.6 s: `last` has expired
    )
    out = env.from_source(ts).key_by("key").process(Sessionizer(), output_schema=OUT)
    result = run(env, out)
    got = [(r["_step"], r["what"], r["n"], r["at"]) for r in result[out]]
    assert got == [
        (0, "prev=None", 1, 0),
        (0, "prev=1", 2, 0),
        (1, "items=[1, 1] distinct=1", 2, 500),
        (2, "prev=1", 7, 600),
        (3, "items=[1, 1, 5] distinct=2", 7, 1_100),
        (4, "prev=None", 14, 3_600),
    ]


class Average(fk.functions.AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, acc):
        return (acc[0] + value["value"], acc[1] + 1)

    def get_result(self, acc):
        return {"mean": acc[0] / acc[1]}

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


class Describe(fk.functions.ProcessWindowFunction):
    def process(self, key, ctx, elements):
        w = ctx.window()
        yield {"what": f"{key}:{sorted(e['value'] for e in elements)}@{w.start}-{w.end} wm={ctx.current_watermark()}"}


def test_window_functions_reduce_aggregate_and_process(env):
    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 3), ("a", 1), ("b", 5)], timestamps=[1_000, 2_000, 3_000])
        .advance_watermark_to(10_000)
    )
    windowed = lambda: env.from_source(ts).key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10)))  # noqa: E731
    reduced = windowed().reduce(lambda x, y: {**x, "value": x["value"] * 10 + y["value"]})
    averaged = windowed().aggregate(Average(), output_schema="mean double")
    described = windowed().process(Describe(), output_schema="what string")
    result = run(env, reduced, averaged, described)
    assert sorted((r["key"], r["value"]) for r in result[reduced]) == [("a", 31), ("b", 5)]
    assert sorted((r["key"], r["mean"]) for r in result[averaged]) == [("a", 2.0), ("b", 5.0)]
    assert sorted(r["what"] for r in result[described]) == ["a:[1, 3]@0-10000 wm=10000", "b:[5]@0-10000 wm=10000"]


def test_processing_time_windows_and_a_custom_trigger(env):
    from examples.ysb import DataArtisansTrigger
    from funke.windows import TumblingProcessingTimeWindows

    ts = (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("a", 1)], timestamps=[100, 200])  # 0: processing time 0
        .advance_processing_time(fk.milliseconds(1_000))  # 1: early firing (custom); processing window [0, 1 s) fires
        .add_elements([("a", 1)], timestamps=[300])  # 2: at 1 s
        .advance_processing_time(fk.milliseconds(1_000))  # 3: early firing again; [1 s, 2 s) fires
        .advance_watermark_to(10_000)  # 4: event-time end: fire and purge
    )
    keyed = env.from_source(ts).key_by("key")
    early = keyed.window(TumblingEventTimeWindows.of(fk.seconds(10))).trigger(DataArtisansTrigger(1_000)).count()
    by_clock = keyed.window(TumblingProcessingTimeWindows.of(fk.seconds(1))).count()
    result = run(env, early, by_clock)
    assert windows(result[early], "count") == [("a", 0, 10_000, 2, 1), ("a", 0, 10_000, 3, 3), ("a", 0, 10_000, 3, 4)]
    assert windows(result[by_clock], "count") == [("a", 0, 1_000, 2, 1), ("a", 1_000, 2_000, 1, 3)]
