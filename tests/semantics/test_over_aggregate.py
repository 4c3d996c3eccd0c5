"""Flink SQL's OVER aggregations on event time (funke.table.over) on funke's keyed process operator, without
Spark: each frame's values derived by hand, peers of a RANGE frame, rows held until the watermark passes
them, late rows dropped and counted, and a property test against recomputing each row's frame; in batch mode
(OverAtEnd) the window functions of the whole partition, checked against PyFlink 2.3 and their definitions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.keyed_process import KeyedProcessOperator
from funke.semantics.time import MAX_WATERMARK
from funke.table.aggregate import AggregateCall
from funke.table.over import Frame, OverAggregate, OverAtEnd
from funke.table.rank import Order

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


# -- batch mode (OverAtEnd): each key's rows at the end of the input ----------------------------------------------

WINDOW = [
    AggregateCall("lead", "lead", ("v", "one", "none")), AggregateCall("nt", "ntile", ("three",)), AggregateCall("cd", "cume_dist"),
    AggregateCall("pr", "percent_rank"), AggregateCall("rk", "rank"), AggregateCall("dr", "dense_rank"),
    AggregateCall("rn", "row_number"), AggregateCall("s", "sum", ("v",)),
]  # fmt: skip


def at_end(order: list[Order], frame: Frame, calls: list[AggregateCall], rows: list[dict]) -> list[dict]:
    op = KeyedProcessOperator(OverAtEnd(order, frame, calls))
    out = []
    for row in rows:
        out += op.process_element("a", {"one": 1, "none": None, "three": 3, **row}, 0)
    assert out == []  # (nothing before the end of the input)
    return [r.value for r in op.advance_watermark(MAX_WATERMARK)]


def test_batch_window_functions_read_the_whole_partition_peers_by_every_order_column():
    """Partition a of the rows checked against PyFlink 2.3 (batch mode, ORDER BY o): ties in arrival order."""
    rows = [{"o": 1, "v": 10}, {"o": 2, "v": 20}, {"o": 2, "v": 5}, {"o": 3, "v": None}, {"o": 5, "v": 7}]
    got = [tuple(r[c] for c in ("o", "v", "lead", "nt", "cd", "pr", "rk", "dr", "rn", "s")) for r in at_end([Order("o")], Frame("RANGE"), WINDOW, rows)]
    assert got == [
        (1, 10, 20, 1, 0.2, 0.0, 1, 1, 1, 10),
        (2, 20, 5, 1, 0.6, 0.25, 2, 2, 2, 35),
        (2, 5, None, 2, 0.6, 0.25, 2, 2, 3, 35),
        (3, None, 7, 2, 0.8, 0.75, 4, 3, 4, 35),
        (5, 7, None, 3, 1.0, 1.0, 5, 4, 5, 42),
    ]


def test_batch_range_n_preceding_on_a_number_descending_and_nulls_a_frame_of_their_own():
    """Checked against PyFlink 2.3: SUM(o) OVER (ORDER BY x [DESC] RANGE BETWEEN 5 PRECEDING AND CURRENT ROW)."""
    rows = [{"x": 10, "o": 1}, {"x": 20, "o": 2}, {"x": 5, "o": 2}, {"x": None, "o": 3}, {"x": 7, "o": 5}]
    calls = [AggregateCall("s", "sum", ("o",))]
    ascending = at_end([Order("x")], Frame("RANGE", 5), calls, rows)
    descending = at_end([Order("x", descending=True, nulls_first=False)], Frame("RANGE", 5), calls, rows)
    assert sorted((r["x"] or 0, r["s"]) for r in ascending) == [(0, 3), (5, 2), (7, 7), (10, 8), (20, 2)]
    assert sorted((r["x"] or 0, r["s"]) for r in descending) == [(0, 3), (5, 8), (7, 6), (10, 1), (20, 2)]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(0, 4)), max_size=12), st.integers(1, 5), st.integers(-3, 3))
def test_batch_window_functions_are_their_definitions_recomputed(values, buckets, offset):
    calls = [
        AggregateCall("lead", "lead", ("v", "off", "none")), AggregateCall("nt", "ntile", ("b",)), AggregateCall("cd", "cume_dist"),
        AggregateCall("pr", "percent_rank"), AggregateCall("rk", "rank"), AggregateCall("dr", "dense_rank"), AggregateCall("rn", "row_number"),
    ]  # fmt: skip
    rows = [{"v": v, "i": i, "off": offset, "b": buckets} for i, v in enumerate(values)]
    got = at_end([Order("v")], Frame("RANGE"), calls, rows)
    ordered = sorted(rows, key=lambda r: (r["v"] is not None, r["v"] or 0, r["i"]))  # NULLs first, ties in arrival order
    assert [r["i"] for r in got] == [r["i"] for r in ordered]
    n = len(ordered)
    sizes = [n // buckets + (1 if b < n % buckets else 0) for b in range(buckets)]
    tiles = [b + 1 for b, size in enumerate(sizes) for _ in range(size)]
    for pos, r in enumerate(got):
        less = sum(1 for o in ordered if (o["v"] is not None, o["v"] or 0) < (r["v"] is not None, r["v"] or 0))
        peers_to = sum(1 for o in ordered if (o["v"] is not None, o["v"] or 0) <= (r["v"] is not None, r["v"] or 0))
        distinct = len({(o["v"] is not None, o["v"] or 0) for o in ordered[:pos + 1]})
        j = pos + offset
        assert (r["rn"], r["rk"], r["dr"], r["nt"]) == (pos + 1, less + 1, distinct, tiles[pos])
        assert r["cd"] == peers_to / n and r["pr"] == (less / (n - 1) if n > 1 else 0.0)
        assert r["lead"] == (ordered[j]["v"] if 0 <= j < n else None)
