"""Interval and window joins in the plan: schemas, placement, and the errors users hit. No Spark runs."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.functions import CoGroupFunction, JoinFunction, ProcessJoinFunction
from funke.plan.capabilities import GENERAL, NATIVE, place
from funke.testing import TestStream
from funke.windows import TumblingEventTimeWindows

WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("ts")
T = dt.datetime(2024, 1, 1)


def two(env=None, watermarks=WM):
    env = env or fk.StreamEnvironment(app="unit")
    a = env.from_collection([{"k": "a", "v": 1, "ts": T}], "k string, v bigint, ts timestamp", watermarks=watermarks)
    b = env.from_collection([{"k": "a", "w": 2.0, "ts": T}], "k string, w double, ts timestamp", watermarks=watermarks)
    return env, a, b


class Pairs(ProcessJoinFunction):
    def process_element(self, left, right, ctx):
        yield {"v": left["v"]}


class J(JoinFunction):
    def join(self, left, right):
        return {"v": left["v"]}


class C(CoGroupFunction):
    def co_group(self, lefts, rights):
        yield {"n": len(lefts)}


def test_projection_schema_names_and_placement_general_by_default_native_when_asked():
    _, a, b = two()
    j = (
        a.key_by("k")
        .interval_join(b.key_by("k"))
        .between(fk.seconds(-1), fk.seconds(2))
        .select("left.k", "v", "w", rts="right.ts")
    )
    assert str(j.schema) == "k string, v bigint, w double, rts timestamp"
    assert place(j.node).path == GENERAL
    assert place(j.node).why.startswith("Flink's pairs exactly: Spark's own stream-stream join would also emit a pair Flink loses")
    assert "on_path('native') runs Spark's join" in place(j.node).why
    native = a.key_by("k").interval_join(b.key_by("k")).between(fk.seconds(-1), fk.seconds(2)).on_path("native").select("v")
    assert place(native.node).path == NATIVE
    assert "2 ms further behind" in place(native.node).why and "Flink loses the pair, Spark keeps it" in place(native.node).why
    with pytest.raises(fk.PlanError, match=r"on_path\('native'\) runs Spark's join, which only projects"):
        a.key_by("k").interval_join(b.key_by("k")).between(0, 1).on_path("native").process(Pairs(), output_schema="v bigint")
    with pytest.raises(fk.PlanError, match="takes 'auto' or 'native'"):
        a.key_by("k").interval_join(b.key_by("k")).between(0, 1).on_path("spark")
    assert (j.node.lower, j.node.upper) == (-1_000, 2_000)
    ex = (
        a.key_by("k")
        .interval_join(b.key_by("k"))
        .between(fk.seconds(-1), fk.seconds(2))
        .lower_bound_exclusive()
        .upper_bound_exclusive()
    )
    node = ex.select("v").node
    assert (node.lower, node.upper, node.bounds) == (-999, 1_999, "(-1000 ms, 2000 ms)")
    assert node.uid != j.node.uid


def test_process_function_and_test_scripts_run_on_the_two_input_general_path():
    _, a, b = two()
    p = (
        a.key_by("k")
        .interval_join(b.key_by("k"))
        .between(fk.seconds(0), fk.seconds(1))
        .process(Pairs(), output_schema="v bigint")
    )
    assert str(p.schema) == "v bigint"
    assert place(p.node).path == GENERAL
    assert "ProcessJoinFunction Pairs runs in Python" in place(p.node).why
    assert "two-input operator" in place(p.node).why
    env = fk.StreamEnvironment(app="unit")
    script = TestStream(schema="k string, v bigint").add_elements([("a", 1)], timestamps=[1_000])
    s1, s2 = env.from_source(script), env.from_source(script)
    q = s1.key_by("k").interval_join(s2.key_by("k")).between(fk.seconds(0), fk.seconds(1)).select("left.v")
    assert place(q.node).path == GENERAL
    assert "test script" in place(q.node).why


def test_interval_join_errors_say_what_to_do():
    _, a, b = two()
    ka, kb = a.key_by("k"), b.key_by("k")
    with pytest.raises(fk.PlanError, match="lower <= upper, got 2000 ms and 1000 ms"):
        ka.interval_join(kb).between(fk.seconds(2), fk.seconds(1))
    with pytest.raises(fk.PlanError, match="call key_by"):
        ka.interval_join(b)
    between = ka.interval_join(kb).between(fk.seconds(0), fk.seconds(1))
    with pytest.raises(fk.SchemaError, match="both streams have a column 'ts': say which, 'left.ts' or 'right.ts'"):
        between.select("ts")
    with pytest.raises(fk.SchemaError, match="the right stream has no column 'v'"):
        between.select("right.v")
    with pytest.raises(fk.SchemaError, match="neither stream has a column 'x'"):
        between.select("x")
    with pytest.raises(fk.SchemaError, match="output column.*v appear twice"):
        between.select("v", v="right.w")
    with pytest.raises(fk.PlanError, match="ProcessJoinFunction subclass"):
        between.process(lambda l, r: l, output_schema="v bigint")  # type: ignore[arg-type]
    with pytest.raises(fk.PlanError, match="keys must pair up"):
        a.key_by(["k", "v"]).interval_join(kb).between(0, 1).select("v")
    with pytest.raises(fk.SchemaError, match=r"left.v \(bigint\) and right.k \(string\) have different types"):
        a.key_by("v").interval_join(kb).between(0, 1).select("w")
    env = fk.StreamEnvironment(app="unit")
    plain = env.from_collection([{"k": "a", "v": 1}], "k string, v bigint")
    timed = env.from_collection([{"k": "a", "ts": T}], "k string, ts timestamp", watermarks=WM)
    with pytest.raises(fk.PlanError, match="event time on both streams, and the left one has none"):
        plain.key_by("k").interval_join(timed.key_by("k")).between(0, 1).select("v")


def test_window_join_and_co_group_build_and_place_on_the_general_path():
    _, a, b = two()
    w = (
        a.join(b)
        .where("k")
        .equal_to("k")
        .window(TumblingEventTimeWindows.of(fk.seconds(10)))
        .apply(J(), output_schema="v bigint")
    )
    assert str(w.schema) == "k string, window_start timestamp, window_end timestamp, v bigint"
    assert place(w.node).path == GENERAL and "two-input operator" in place(w.node).why
    c = (
        a.co_group(b)
        .where("k")
        .equal_to("k")
        .window(TumblingEventTimeWindows.of(fk.seconds(10)))
        .apply(C(), output_schema="n bigint")
    )
    assert "co_group" in c.node.label() and c.node.uid != w.node.uid
    with pytest.raises(fk.PlanError, match=r"join\(\)\.apply\(\) takes a JoinFunction subclass"):
        a.join(b).where("k").equal_to("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).apply(
            C(), output_schema="n bigint"
        )
    with pytest.raises(fk.PlanError, match="call where"):
        a.co_group(b).equal_to("k")
    with pytest.raises(fk.PlanError, match="on= is for static tables"):
        a.join(b, on="k")


def test_a_window_cannot_share_the_watermark_of_a_native_interval_join():
    from funke.plan.facts import analyse

    env, a, b = two()
    j = a.key_by("k").interval_join(b.key_by("k")).between(0, 1).on_path("native").select("v")
    j.collect()
    assert len(analyse(env._sinks).join_watermarks) == 2
    a.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    with pytest.raises(fk.UnsupportedError, match="reads the same watermark as a native interval join"):
        analyse(env._sinks)
