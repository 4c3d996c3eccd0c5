"""Bigints above 2**53 reach a general-path operator and leave it exactly, streaming and bounded,
one input and two: pandas makes float64 of a nullable int64 column, and the operator's frames
always hold nulls (time rows, the other input's rows, the ``DUE`` report)."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.functions import KeyedCoProcessFunction, KeyedProcessFunction
from funke.windows import TumblingEventTimeWindows

pytestmark = pytest.mark.spark

BIG = 1795683994422123457  # float64 rounds it to ...520
ROWS = [{"k": "a", "id": BIG}, {"k": "b", "id": -BIG - 3}, {"k": "c", "id": None}]
SCHEMA = "k string, id bigint"
OUT = "k string, id bigint, plus_one bigint, seen string"


def _out(value):
    i = value["id"]
    return {"k": value["k"], "id": i, "plus_one": None if i is None else i + 1, "seen": repr(i)}


class Echo(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield _out(value)


class EchoBoth(KeyedCoProcessFunction):
    def process_element1(self, value, ctx):
        yield _out(value)

    def process_element2(self, value, ctx):
        yield _out({"k": value["k"], "id": value["other"]})


def _expected(rows):
    return sorted((r["k"], r["id"], None if r["id"] is None else r["id"] + 1, repr(r["id"])) for r in rows)


def _got(sink):
    return sorted((r["k"], r["id"], r["plus_one"], r["seen"]) for r in sink.rows)


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_bigints_through_one_and_two_input_functions_exactly(env, bounded):
    one = env.from_collection(ROWS, SCHEMA).key_by("k").process(Echo(), output_schema=OUT).collect()
    other = [{"k": "d", "other": BIG + 2}]
    first = env.from_collection(ROWS, SCHEMA).key_by("k")
    second = env.from_collection(other, "k string, other bigint").key_by("k")
    two = first.connect(second).process(EchoBoth(), output_schema=OUT).collect()
    assert env.execute(bounded=bounded).wait(300).done
    assert _got(one) == _expected(ROWS)
    assert _got(two) == _expected([*ROWS, {"k": "d", "id": BIG + 2}])


@pytest.mark.parametrize("bounded", [False, True], ids=["streaming", "bounded"])
def test_window_aggregates_pre_aggregated_before_the_shuffle_stay_exact(env, bounded):
    """A general-path window of built-in aggregates travels to its buckets as partial rows
    (``PreAggregate.before_shuffle``): their sums, minima and maxima of bigints above 2**53, with
    nulls among them (and a window of nulls only, whose sum is NULL), are those of the native path
    and of Python's integers."""
    def at(ms):
        return dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)

    values = [("a", BIG, 100), ("a", None, 200), ("a", 3, 9_000), ("b", -BIG - 3, 500), ("b", None, 600), ("a", BIG, 12_000),
              ("c", None, 700), ("c", None, 800)]  # fmt: skip
    rows = [{"k": k, "id": v, "t": at(t)} for k, v, t in values]
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(0)).with_timestamp_assigner("t")
    keyed = env.from_collection(rows, "k string, id bigint, t timestamp", rows_per_batch=2, watermarks=wm).key_by("k")
    aggs = {"n": "count", "total": ("sum", "id"), "low": ("min", "id"), "high": ("max", "id")}
    native = keyed.window(TumblingEventTimeWindows.of(fk.seconds(10))).aggregate(**aggs).collect()
    general = keyed.window(TumblingEventTimeWindows.of(fk.seconds(10))).on_path("general").aggregate(**aggs).collect()
    assert env.execute(bounded=bounded).wait(300).done

    def got(sink):
        return sorted((r["k"], r["window_start"], r["n"], r["total"], r["low"], r["high"]) for r in sink.rows)

    w0, w1 = at(0).replace(tzinfo=None), at(10_000).replace(tzinfo=None)
    expected = [("a", w0, 3, BIG + 3, 3, BIG), ("a", w1, 1, BIG, BIG, BIG), ("b", w0, 2, -BIG - 3, -BIG - 3, -BIG - 3),
                ("c", w0, 2, None, None, None)]  # (a window of nulls only: its SUM is NULL, as Spark's and SQL's)
    assert [r[0:1] + r[2:] for r in got(general)] == [r[0:1] + r[2:] for r in expected]
    assert got(general) == got(native)
