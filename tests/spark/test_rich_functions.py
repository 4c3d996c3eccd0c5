"""funke's own API gains of issue 41 on Spark, streaming (a TestStream: one micro-batch a step) and
bounded: window_all, an unkeyed ProcessFunction, function classes with open/close, apply with a
WindowFunction, ``yield tag, value`` side outputs and CoProcessFunction.open(runtime_context).
Expected rows are derived by hand from each script."""

from __future__ import annotations

import json

import pytest

import funke as fk
from funke.functions import (
    CoProcessFunction,
    FilterFunction,
    FlatMapFunction,
    KeyedProcessFunction,
    KeySelector,
    MapFunction,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessFunction,
    WindowFunction,
)
from funke.plan.capabilities import place
from funke.testing import TestStream, assert_rows, run
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark

SCHEMA = "key string, value bigint"
LATE = OutputTag("late", SCHEMA)
NEGATIVE = OutputTag("negative", "value bigint")


def ms(t):
    return int(t.timestamp() * 1000)


def script():
    return (
        TestStream(schema=SCHEMA)
        .add_elements([("a", 1), ("b", 2), ("a", -3)], timestamps=[1_000, 2_000, 3_000])  # 0
        .advance_watermark_to(10_500)  # 1: window [0, 10 s) fires
        .add_elements([("b", 4), ("c", 5)], timestamps=[500, 11_000])  # 2: b/4 is late
    )


@pytest.mark.parametrize("bounded", [False, True])
def test_window_all_sums_every_key_in_one_window_and_sends_late_elements_to_a_side_output(env, bounded):
    if bounded:  # (a bounded run sees no watermark before the end: nothing is late)
        ts = TestStream(schema=SCHEMA).add_elements([("a", 1), ("b", 2), ("c", 5)], timestamps=[1_000, 2_000, 11_000])
    else:
        ts = script()
    out = (
        env.from_source(ts)
        .window_all(TumblingEventTimeWindows.of(fk.seconds(10)))
        .side_output_late_data(LATE)
        .sum("value")
    )
    assert out.schema.names == ("window_start", "window_end", "value")
    result = run(env, out, LATE, bounded=bounded)
    got = sorted((ms(r["window_start"]), ms(r["window_end"]), r["value"]) for r in result[out])
    if bounded:
        assert got == [(0, 10_000, 3), (10_000, 20_000, 5)]
        assert result[LATE] == []
    else:
        assert got == [(0, 10_000, 0), (10_000, 20_000, 5)]
        assert [(r["key"], r["value"]) for r in result[LATE]] == [("b", 4)]


class CountAll(ProcessAllWindowFunction):
    def process(self, ctx, elements):
        keys = sorted({e["key"] for e in elements})
        yield {"end": ctx.window().end, "keys": ",".join(keys), "n": len(elements)}


def test_window_all_with_a_process_all_window_function_and_count_window_all(env):
    ts = TestStream(schema=SCHEMA).add_elements([("a", 1), ("b", 2), ("a", 3)], timestamps=[1_000, 2_000, 12_000])
    stream = env.from_source(ts)
    windows = stream.window_all(TumblingEventTimeWindows.of(fk.seconds(10))).process(CountAll(), output_schema="end bigint, keys string, n bigint")
    pairs = stream.count_window_all(2).reduce(lambda a, b: {**a, "value": a["value"] + b["value"]})
    result = run(env, windows, pairs)
    assert sorted((r["end"], r["keys"], r["n"]) for r in result[windows]) == [(10_000, "a,b", 2), (20_000, "a", 1)]
    assert [r["value"] for r in result[pairs]] == [3]  # the third element waits for a fourth


class Split(ProcessFunction):
    def open(self, runtime_context):
        self.scale = 10

    def process_element(self, value, ctx):
        if value["value"] < 0:
            yield NEGATIVE, {"value": value["value"]}
        else:
            yield {"key": value["key"], "scaled": value["value"] * self.scale, "ts": ctx.timestamp()}


@pytest.mark.parametrize("bounded", [False, True])
def test_an_unkeyed_process_function_with_open_side_outputs_and_timestamps(env, bounded):
    out = env.from_source(script()).process(Split(), output_schema="key string, scaled bigint, ts bigint")
    assert place(out.node).path == "general"
    result = run(env, out, NEGATIVE, bounded=bounded)
    assert_rows(
        result[out],
        [
            {"key": "a", "scaled": 10, "ts": 1_000},
            {"key": "b", "scaled": 20, "ts": 2_000},
            {"key": "b", "scaled": 40, "ts": 500},
            {"key": "c", "scaled": 50, "ts": 11_000},
        ],
    )
    assert [r["value"] for r in result[NEGATIVE]] == [-3]


class Route(KeyedProcessFunction):
    def process_element(self, value, ctx):
        if value["value"] < 0:
            yield NEGATIVE, {"value": value["value"]}  # used to become a main-output row of two fields
        else:
            yield (ctx.get_current_key(), value["value"])


@pytest.mark.parametrize("bounded", [False, True])
def test_a_keyed_process_function_yielding_tag_and_value_writes_the_side_output(env, bounded):
    out = env.from_source(script()).key_by("key").process(Route(), output_schema="k string, v bigint")
    result = run(env, out, NEGATIVE, bounded=bounded)
    assert sorted((r["k"], r["v"]) for r in result[out]) == [("a", 1), ("b", 2), ("b", 4), ("c", 5)]
    assert [r["value"] for r in result[NEGATIVE]] == [-3]


class Closing:
    """Records each open and close in a file the test reads (the functions run in Spark's workers)."""

    def __init__(self, path):
        self.path = str(path)

    def _log(self, event):
        with open(self.path, "a") as f:
            f.write(json.dumps([type(self).__name__, event]) + "\n")

    def close(self):
        self._log("close")


class Tenfold(Closing, MapFunction):
    def open(self, runtime_context):
        self.factor = 10
        self._log("open")

    def map(self, value):
        return {"key": value["key"], "value": value["value"] * self.factor}


class Words(Closing, FlatMapFunction):
    def open(self, runtime_context):
        self.sep = ","
        self._log("open")

    def flat_map(self, value):
        for part in value["key"].split(self.sep):
            yield {"key": part, "value": value["value"]}


class Positive(Closing, FilterFunction):
    def open(self, runtime_context):
        self.limit = 0
        self._log("open")

    def filter(self, value):
        return value["value"] > self.limit


class FirstLetter(Closing, KeySelector):
    def open(self, runtime_context):
        self.width = 1
        self._log("open")

    def get_key(self, value):
        return value["key"][: self.width]


@pytest.mark.parametrize("bounded", [False, True])
def test_map_flat_map_filter_and_key_selector_classes_are_opened_before_and_closed_after_their_rows(env, tmp_path, bounded):
    log = tmp_path / "lifecycle.jsonl"
    ts = TestStream(schema=SCHEMA).add_elements([("ab,ac", 1), ("b", -2)], timestamps=[1, 2]).add_elements([("bc", 3)], timestamps=[3])
    out = (
        env.from_source(ts)
        .select("key", "value")
        .flat_map(Words(log))
        .filter(Positive(log))
        .map(Tenfold(log))
        .key_by(FirstLetter(log))
        .sum("value")
    )
    result = run(env, out, bounded=bounded)
    assert sorted((r["key"], r["value"]) for r in result[out]) == [("a", 10), ("a", 20), ("b", 30)]
    events = [tuple(json.loads(line)) for line in log.read_text().splitlines()]
    for name in ("Words", "Positive", "Tenfold", "FirstLetter"):
        mine = [e for n, e in events if n == name]
        assert mine and mine.count("open") == mine.count("close"), mine
        assert mine[0] == "open" and mine[-1] == "close"


class KeyTotals(WindowFunction):
    def apply(self, key, window, inputs):
        yield {"key": key, "end": window.end, "total": sum(i["value"] for i in inputs)}


def test_apply_with_a_window_function_and_reduce_with_a_window_function(env):
    ts = TestStream(schema=SCHEMA).add_elements([("a", 1), ("a", 2), ("b", 5), ("a", 4)], timestamps=[1_000, 2_000, 3_000, 12_000])
    windowed = env.from_source(ts).key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10)))
    applied = windowed.apply(KeyTotals(), output_schema="key string, end bigint, total bigint")
    windowed2 = env.from_source(ts).key_by("key").window(TumblingEventTimeWindows.of(fk.seconds(10)))
    reduced = windowed2.reduce(lambda a, b: {**a, "value": a["value"] + b["value"]}, KeyTotals(), output_schema="key string, end bigint, total bigint")
    result = run(env, applied, reduced)
    expected = [("a", 10_000, 3), ("a", 20_000, 4), ("b", 10_000, 5)]
    assert sorted((r["key"], r["end"], r["total"]) for r in result[applied]) == expected
    assert sorted((r["key"], r["end"], r["total"]) for r in result[reduced]) == expected


class Merge(CoProcessFunction):
    def open(self, runtime_context):  # PyFlink's signature
        self.task = runtime_context.get_task_name()

    def process_element1(self, value, ctx):
        yield {"key": value["key"], "side": 1, "task": self.task}

    def process_element2(self, value, ctx):
        if value["value"] < 0:
            yield NEGATIVE, {"value": value["value"]}
        else:
            yield {"key": value["key"], "side": 2, "task": self.task}


def test_co_process_function_open_takes_a_runtime_context_on_spark(env):
    left = TestStream(schema=SCHEMA).add_elements([("a", 1)], timestamps=[1])
    right = TestStream(schema=SCHEMA).add_elements([("b", 2), ("c", -1)], timestamps=[2, 3])
    out = env.from_source(left).connect(env.from_source(right)).process(Merge(), output_schema="key string, side int, task string")
    result = run(env, out, NEGATIVE)
    assert sorted((r["key"], r["side"], r["task"]) for r in result[out]) == [("a", 1, "Merge"), ("b", 2, "Merge")]
    assert [r["value"] for r in result[NEGATIVE]] == [-1]
