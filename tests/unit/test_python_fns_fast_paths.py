"""The fast paths of row functions (funke.spark.python_fns) give what the plain way gives: each
column's ``to_pylist()`` (timestamps made naive UTC first), ``fn`` called once per row in order,
the same values of the same Python types whatever a batch holds (nulls, NaN, no rows, odd names)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pyarrow as pa
import pytest

from funke.errors import UserFunctionError
from funke.plan.types import Schema
from funke.spark.python_fns import row_function

UTC = dt.UTC
INT_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]


def plain_rows(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    """The row dicts the slow, obvious way."""
    columns = []
    for c in batch.columns:
        if pa.types.is_timestamp(c.type) and c.type.tz is not None:
            c = c.cast(pa.timestamp(c.type.unit))
        columns.append(c.to_pylist())
    return [dict(zip(batch.schema.names, values)) for values in zip(*columns)]


def typed(rows: list[dict[str, Any]]) -> list[list[tuple[str, type, str]]]:
    """Rows as (name, exact type, repr) triples: 1 and 1.0, NaN and NaN, -0.0 and 0.0 told apart as they should be."""
    return [[(k, type(v), repr(v)) for k, v in r.items()] for r in rows]


def seen_rows(batches: list[pa.RecordBatch], mode: str = "map") -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def fn(r: dict[str, Any]) -> Any:
        seen.append(r)
        return True if mode == "filter" else ({"n": 1} if mode == "map" else [{"n": 1}])

    for _ in row_function(fn, mode, Schema.of("n bigint"), "map 'm'")(iter(batches)):
        pass
    return seen


def numeric_batch(nulls: bool) -> pa.RecordBatch:
    n = 7
    null = [None] if nulls else []
    arrays, names = [], []
    for t in INT_TYPES:
        top = 2 ** (t.bit_width - 1) - 1
        arrays.append(pa.array([0, -1, top, -top - 1, 5, *null, 3][:n], t))
        names.append(str(t))
    arrays.append(pa.array([0.1, -0.0, math.nan, math.inf, 1e300, *null, 2.5][:n], pa.float64()))
    arrays.append(pa.array([0.1, -0.0, math.nan, -math.inf, 3.4e38, *null, 2.5][:n], pa.float32()))
    names += ["double", "float"]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def other_batch(n: int) -> pa.RecordBatch:
    base = dt.datetime(2024, 3, 1, 12, tzinfo=UTC)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([base + dt.timedelta(seconds=i) if i % 3 else None for i in range(n)], pa.timestamp("us", tz="UTC")),
            pa.array([base.replace(tzinfo=None) + dt.timedelta(days=i) for i in range(n)], pa.timestamp("us")),
            pa.array([base + dt.timedelta(milliseconds=i) for i in range(n)], pa.timestamp("ms", tz="Europe/Paris")),
            pa.array([f"s{i}" if i % 2 else None for i in range(n)]),
            pa.array([i % 2 == 0 for i in range(n)]),
            pa.array([dt.date(2024, 1, 1 + i % 28) for i in range(n)], pa.date32()),
            pa.array([bytes([i % 256]) for i in range(n)], pa.binary()),
        ],
        # names that the generated code must take as data: quotes, spaces, and its own variable names
        names=["t", "naive", "paris", 'it\'s "s"', "v0", "fn", "columns"],
    )


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("mode", ["map", "filter", "flat_map"])
def test_numeric_columns_with_and_without_nulls_reach_the_function_as_to_pylist_gives_them(nulls, mode):
    b = numeric_batch(nulls)
    assert b.column(0).null_count == (1 if nulls else 0)
    assert typed(seen_rows([b], mode)) == typed(plain_rows(b))


def test_a_null_in_a_later_batch_and_a_sliced_batch_give_the_plain_rows():
    clean, with_null = numeric_batch(False), numeric_batch(True)
    sliced = with_null.slice(2, 4)  # an offset into the buffers
    assert typed(seen_rows([clean, with_null, sliced, clean])) == typed(
        plain_rows(clean) + plain_rows(with_null) + plain_rows(sliced) + plain_rows(clean)
    )


def test_timestamps_are_naive_utc_and_other_types_and_odd_names_arrive_unchanged():
    b = other_batch(9)
    rows = seen_rows([b])
    assert typed(rows) == typed(plain_rows(b))
    assert rows[1]["t"] == dt.datetime(2024, 3, 1, 12, 0, 1) and rows[0]["t"] is None
    assert rows[0]["paris"] == dt.datetime(2024, 3, 1, 12)  # the instant, in UTC, without tzinfo
    assert list(rows[0]) == ["t", "naive", "paris", 'it\'s "s"', "v0", "fn", "columns"]


@pytest.mark.parametrize("mode", ["map", "filter", "flat_map"])
def test_an_empty_batch_calls_nothing_and_gives_an_empty_batch(mode):
    empty = numeric_batch(False).slice(0, 0)
    out_schema = Schema.of("n bigint")
    got = list(row_function(lambda r: pytest.fail("called"), mode, out_schema, "map 'm'")(iter([empty])))
    assert [b.num_rows for b in got] == [0]


def test_filter_keeps_the_rows_whose_result_is_truthy_as_bool_says():
    b = pa.RecordBatch.from_arrays([pa.array(range(8), pa.int64())], names=["i"])
    answers = [0, 1, "", "x", [], [0], None, 2.5]
    got = next(row_function(lambda r: answers[r["i"]], "filter", Schema.of("i bigint"), "filter 'f'")(iter([b])))
    assert got.column(0).to_pylist() == [i for i, a in enumerate(answers) if bool(a)]


def test_flat_map_takes_each_result_before_calling_the_function_again():
    b = pa.RecordBatch.from_arrays([pa.array(range(3), pa.int64())], names=["i"])
    events = []

    def fn(r):
        events.append(f"call {r['i']}")
        if r["i"] == 1:
            return None

        def rows():
            events.append(f"take {r['i']}")
            yield {"i": r["i"]}
            yield {"i": r["i"] * 10}

        return rows()

    got = next(row_function(fn, "flat_map", Schema.of("i bigint"), "flat_map 'f'")(iter([b])))
    assert got.column(0).to_pylist() == [0, 0, 2, 20]
    assert events == ["call 0", "take 0", "call 1", "call 2", "take 2"]


def test_map_calls_the_function_once_per_row_in_order_and_keeps_its_errors():
    b = pa.RecordBatch.from_arrays([pa.array(range(5), pa.int64())], names=["i"])
    calls = []

    def fn(r):
        calls.append(r["i"])
        if r["i"] == 3:
            raise ValueError("row 3 is bad")
        return {"i": r["i"]}

    with pytest.raises(UserFunctionError, match=r"^test_map_calls.*<locals>\.fn in map 'm' raised ValueError: row 3 is bad\n") as e:
        list(row_function(fn, "map", Schema.of("i bigint"), "map 'm'")(iter([b])))
    assert isinstance(e.value.__cause__, ValueError)  # the user's own exception, kept as the cause
    assert calls == [0, 1, 2, 3]


class Count(int):
    """An int subclass: compatible with bigint, but not the plain ints of the numpy way."""


@pytest.mark.parametrize(
    "values",
    [
        [0, -1, 2**63 - 1, -(2**63), 7],  # plain ints, the int64 limits included
        [0, None, 5],  # a null
        [Count(3), 4],  # an int subclass
        [1, 2.0],  # a float among ints (bigint takes no float: the check says so first)
        [],
    ],
)
def test_bigint_results_are_the_arrays_pa_array_makes(values):
    b = pa.RecordBatch.from_arrays([pa.array(range(len(values)), pa.int64())], names=["i"])
    fn = row_function(lambda r: {"n": values[r["i"]]}, "map", Schema.of("n bigint"), "map 'm'")
    try:
        expected: Any = pa.array(values, pa.int64())
    except (pa.ArrowException, OverflowError, TypeError) as e:
        expected = e
    if isinstance(expected, pa.Array) and float not in set(map(type, values)):
        got = next(fn(iter([b]))).column(0)
        assert got.equals(expected) and got.type == pa.int64()
    else:
        with pytest.raises(Exception, match="column 'n' is declared bigint but the function returned 2.0"):
            next(fn(iter([b])))


@pytest.mark.parametrize("big", [2**63, -(2**63) - 1])
def test_an_int_too_large_for_bigint_fails_as_pa_array_does(big):
    b = pa.RecordBatch.from_arrays([pa.array(range(3), pa.int64())], names=["i"])
    fn = row_function(lambda r: {"n": big if r["i"] == 1 else r["i"]}, "map", Schema.of("n bigint"), "map 'm'")
    with pytest.raises(Exception) as plain:
        pa.array([0, big, 2], pa.int64())
    with pytest.raises(type(plain.value)) as got:
        next(fn(iter([b])))
    assert str(got.value) == str(plain.value)
