"""Row functions over Arrow batches (funke.spark.python_fns), without Spark: what comes out, and
every result row checked against the declared schema with the same messages as row by row."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from funke.errors import SchemaError
from funke.plan.probe import check_row
from funke.plan.types import Schema
from funke.spark.python_fns import row_function

OUT = Schema.of("i bigint, name string, t timestamp")


def batch(n: int) -> pa.RecordBatch:
    times = pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i) for i in range(n)], pa.timestamp("us", tz="UTC"))
    return pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64()), pa.array([f"n{i}" for i in range(n)]), times], names=["i", "name", "t"])


def run(fn, mode="map", out=OUT, n=5):
    return [r for b in row_function(fn, mode, out, "map 'm'")(iter([batch(n)])) for r in b.to_pylist()]


@dataclasses.dataclass
class Row:
    i: int
    name: str
    t: dt.datetime


def test_rows_reach_the_function_as_dicts_with_naive_utc_times_and_results_keep_their_values():
    seen = []
    got = run(lambda r: seen.append(r) or {"i": r["i"] * 10, "name": r["name"].upper(), "t": r["t"]})
    assert seen[1] == {"i": 1, "name": "n1", "t": dt.datetime(2024, 1, 1, 0, 0, 1)}
    assert got[1] == {"i": 10, "name": "N1", "t": dt.datetime(2024, 1, 1, 0, 0, 1, tzinfo=dt.UTC)}
    # tuples, dataclasses, a mix, and flat_map / filter
    assert run(lambda r: (r["i"], r["name"], r["t"])) == run(lambda r: Row(r["i"], r["name"], r["t"]))
    mixed = run(lambda r: Row(r["i"], r["name"], r["t"]) if r["i"] % 2 else {"t": r["t"], "name": r["name"], "i": r["i"]})
    assert [r["i"] for r in mixed] == [0, 1, 2, 3, 4]
    assert [r["i"] for r in run(lambda r: [r, r] if r["i"] < 2 else None, mode="flat_map")] == [0, 0, 1, 1]
    assert [r["i"] for r in run(lambda r: r["i"] % 2 == 0, mode="filter")] == [0, 2, 4]
    assert run(lambda r: None, mode="flat_map") == []


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"i": 1, "name": "x"}, "missing t"),
        ({"i": 1, "name": "x", "t": None, "extra": 2}, "unexpected extra"),
        ({"i": 1, "name": "x", "tt": None}, "missing t; unexpected tt"),
        ({"i": "1", "name": "x", "t": None}, "column 'i' is declared bigint but the function returned '1'"),
        ({"i": 1.5, "name": "x", "t": None}, "column 'i' is declared bigint but the function returned 1.5"),
        ({"i": True, "name": "x", "t": None}, "column 'i' is declared bigint but the function returned True"),
        ((1, "x"), "returned 2 values"),
        ([1, "x", None], "return a dict (or tuple)"),
    ],
)
def test_a_bad_row_among_good_ones_fails_with_the_row_by_row_message(bad, message):
    def fn(r):
        return bad if r["i"] == 3 else {"i": r["i"], "name": r["name"], "t": None}

    with pytest.raises(SchemaError, match="map 'm'") as e:
        run(fn)
    assert message in str(e.value)
    with pytest.raises(SchemaError) as again:
        check_row(bad, OUT, "map 'm'")
    assert str(e.value) == str(again.value)


values = st.one_of(st.none(), st.integers(-(2**40), 2**40), st.floats(allow_nan=False), st.text(max_size=3), st.booleans())


@given(st.lists(st.tuples(values, values), min_size=1, max_size=30))
def test_accepts_and_refuses_exactly_what_check_row_does(rows):
    out = Schema.of("a bigint, b double")
    expected: list | SchemaError
    try:
        expected = [check_row({"a": a, "b": b}, out, "m") for a, b in rows]
    except SchemaError as e:
        expected = e
    n = len(rows)
    it = iter(rows)

    def fn(_):
        a, b = next(it)
        return {"a": a, "b": b}

    source = pa.RecordBatch.from_arrays([pa.array(range(n), pa.int64())], names=["x"])
    try:
        got = [tuple(r.values()) for b in row_function(fn, "map", out, "m")(iter([source])) for r in b.to_pylist()]
    except SchemaError as e:
        assert isinstance(expected, SchemaError) and str(e) == str(expected)
        return
    assert not isinstance(expected, SchemaError)
    assert got == [(a, None if b is None else float(b)) for a, b in expected]
