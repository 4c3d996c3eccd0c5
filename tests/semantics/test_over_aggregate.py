"""Flink SQL's OVER aggregations on event time (funke.table.over) on funke's keyed process operator, without
Spark: each frame's values derived by hand, peers of a RANGE frame, rows held until the watermark passes
them, late rows dropped and counted, and a property test against recomputing each row's frame."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.keyed_process import KeyedProcessOperator
from funke.table.aggregate import AggregateCall
from funke.table.over import Frame, OverAggregate

CALLS = [AggregateCall("s", "sum", ("v",)), AggregateCall("n", "count"), AggregateCall("m", "max", ("v",))]


def run(frame: Frame, rows: list[tuple[int, int | None]], watermark_after: int | None = None) -> tuple[list[tuple], KeyedProcessOperator]:
    op = KeyedProcessOperator(OverAggregate("ts", frame, CALLS))
    out = []
    for ts, v in rows:
        out += op.process_element("a", {"k": "a", "ts": ts, "v": v}, ts)
    out += op.advance_watermark(watermark_after if watermark_after is not None else 10**12)
    return [(r.value["ts"], r.value["v"], r.value["s"], r.value["n"], r.value["m"]) for r in out], op


def test_rows_frame_takes_the_row_and_the_n_before_it_in_time_order_ties_in_arrival_order():
    got, _ = run(Frame("ROWS", 1), [(3, 30), (1, 10), (2, 20), (2, 21), (5, None)])
    assert got == [
        (1, 10, 10, 1, 10),
        (2, 20, 30, 2, 20),
        (2, 21, 41, 2, 21),  # (10 left the frame)
        (3, 30, 51, 2, 30),
        (5, None, 30, 2, 30),  # (a NULL counts as a row of COUNT(*), not as a value)
    ]


def test_range_frame_gives_peers_the_same_values_and_drops_rows_older_than_the_interval():
    got, _ = run(Frame("RANGE", 1), [(1, 10), (2, 20), (2, 5), (4, 1)])
    assert got == [(1, 10, 10, 1, 10), (2, 20, 35, 3, 20), (2, 5, 35, 3, 20), (4, 1, 1, 1, 1)]


def test_unbounded_frames_count_everything_before_rows_one_by_one_range_by_time():
    assert run(Frame("ROWS"), [(1, 1), (1, 2), (2, 3)])[0] == [(1, 1, 1, 1, 1), (1, 2, 3, 2, 2), (2, 3, 6, 3, 3)]
    assert run(Frame("RANGE"), [(1, 1), (1, 2), (2, 3)])[0] == [(1, 1, 3, 2, 2), (1, 2, 3, 2, 2), (2, 3, 6, 3, 3)]


def test_a_row_waits_for_the_watermark_and_a_late_row_is_dropped_and_counted():
    op = KeyedProcessOperator(OverAggregate("ts", Frame("ROWS", 5), CALLS))
    assert op.process_element("a", {"ts": 5, "v": 1}, 5) == []
    assert [r.value["s"] for r in op.advance_watermark(5)] == [1]
    assert op.process_element("a", {"ts": 5, "v": 2}, 5) == []  # (not after the watermark: late)
    assert op.process_element("a", {"ts": 6, "v": 3}, 6) == []
    assert [r.value["s"] for r in op.advance_watermark(6)] == [4]
    assert op.num_late_records_dropped == 1


def test_a_row_without_its_time_fails_naming_it():
    op = KeyedProcessOperator(OverAggregate("ts", Frame("ROWS", 1), CALLS))
    with pytest.raises(ValueError, match="a row without its time attribute ts"):
        op.process_element("a", {"ts": None, "v": 1}, None)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(-5, 5))), max_size=25),
    st.sampled_from(["ROWS", "RANGE"]),
    st.one_of(st.none(), st.integers(0, 3)),
)
def test_each_row_s_values_are_its_frame_s_aggregates_recomputed(rows, kind, preceding):
    got, _ = run(Frame(kind, preceding), rows)
    ordered = sorted(enumerate(rows), key=lambda x: (x[1][0], x[0]))  # time order, ties in arrival order
    expected = []
    for pos, (_, (ts, v)) in enumerate(ordered):
        if kind == "ROWS":
            frame = [r for _, r in ordered[: pos + 1]][-(preceding + 1):] if preceding is not None else [r for _, r in ordered[: pos + 1]]
        else:
            frame = [r for _, r in ordered if r[0] <= ts and (preceding is None or r[0] >= ts - preceding)]
        values = [x for _, x in frame if x is not None]
        expected.append((ts, v, sum(values) if values else None, len(frame), max(values) if values else None))
    assert got == expected
