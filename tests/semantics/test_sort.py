"""Flink SQL's sorts without a window (funke.table.sort) on funke's keyed process operator, without Spark:
the temporal sort releases rows as the watermark (or the clock) passes them, ordered by the rest of the
ORDER BY, and drops late ones; the batch sort orders the whole input at its end, applies an updating
input's retractions first, and skips and limits; a property test against Python's sort."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import MAX_WATERMARK
from funke.table.changelog import ROW_KIND
from funke.table.rank import Order
from funke.table.sort import Sort


def values(records) -> list[tuple]:
    return [(r.value["ts"], r.value["v"]) for r in records]


def test_temporal_sort_releases_rows_as_the_watermark_passes_them_ordered_by_the_rest():
    op = KeyedProcessOperator(Sort([Order("ts"), Order("v", descending=True)], time="ts"))
    for ts, v in [(3, 1), (1, 2), (2, 5), (1, 7), (2, 6)]:
        assert op.process_element(0, {"ts": ts, "v": v}, ts) == []
    assert values(op.advance_watermark(2)) == [(1, 7), (1, 2), (2, 6), (2, 5)]
    assert op.process_element(0, {"ts": 2, "v": 9}, 2) == []  # (not after the watermark: late)
    assert op.process_element(0, {"ts": 4, "v": 0}, 4) == []
    assert values(op.advance_watermark(MAX_WATERMARK)) == [(3, 1), (4, 0)]
    assert op.num_late_records_dropped == 1


def test_processing_time_sort_releases_each_time_s_rows_when_the_clock_passes_it():
    op = KeyedProcessOperator(Sort([Order("ts"), Order("v")], time="ts", processing=True))
    for v in (3, 1, 2):
        assert op.process_element(0, {"ts": 10, "v": v}) == []
    assert values(op.advance_processing_time(10)) == [(10, 1), (10, 2), (10, 3)]
    assert op.num_late_records_dropped == 0


def test_whole_input_sort_waits_for_the_end_then_orders_skips_and_limits_ties_in_arrival_order():
    op = KeyedProcessOperator(Sort([Order("v", descending=True, nulls_first=False)], limit=3, offset=1))
    for ts, v in [(1, 2), (2, None), (3, 5), (4, 2), (5, 9)]:
        assert op.process_element(0, {"ts": ts, "v": v}, ts) == []
    assert op.advance_watermark(10**12) == []  # (only the end of the input releases them)
    assert values(op.advance_watermark(MAX_WATERMARK)) == [(3, 5), (1, 2), (4, 2)]


def test_whole_input_sort_applies_an_updating_input_first():
    op = KeyedProcessOperator(Sort([Order("v")]))
    changes = [("+I", "a", 1), ("+I", "b", 2), ("-U", "a", 1), ("+U", "a", 4), ("-D", "b", 2), ("+I", "c", 3)]
    for kind, k, v in changes:
        op.process_element(0, {"k": k, "v": v, **_kind(kind)})
    assert [(r.value["k"], r.value["v"]) for r in op.advance_watermark(MAX_WATERMARK)] == [("c", 3), ("a", 4)]


def _kind(kind: str) -> dict:
    return {ROW_KIND: kind}


def test_a_retraction_of_a_row_never_inserted_fails_naming_it():
    op = KeyedProcessOperator(Sort([Order("v")]))
    with pytest.raises(ValueError, match="retracts a row it never inserted"):
        op.process_element(0, {"v": 1, **_kind("-D")})


def test_a_temporal_sort_takes_no_limit():
    with pytest.raises(ValueError, match="Top-N"):
        Sort([Order("ts")], time="ts", limit=1)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(-3, 3))), max_size=30),
    st.booleans(),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 10)),
    st.integers(0, 5),
)
def test_whole_input_sort_is_python_s_stable_sort(rows, descending, nulls_first, limit, offset):
    op = KeyedProcessOperator(Sort([Order("v", descending, nulls_first), Order("k")], limit=limit, offset=offset))
    for i, (k, v) in enumerate(rows):
        op.process_element(0, {"i": i, "k": k, "v": v})
    got = [r.value["i"] for r in op.advance_watermark(MAX_WATERMARK)]

    def key(item):
        _, (k, v) = item
        null = (v is None) != nulls_first  # (False sorts first)
        return (null, 0 if v is None else (-v if descending else v), k)

    arrived = list(enumerate(rows))  # (ties on every column: arrival order)
    want = [i for i, _ in sorted(arrived, key=key)][offset:]
    assert got == (want if limit is None else want[:limit])
