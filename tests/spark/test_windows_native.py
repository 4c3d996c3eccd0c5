"""The native path on Spark gives Flink's results, and bounded runs equal unbounded ones."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import funke as fk
from funke.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

from .helpers import reference_counts, ts, window_rows

pytestmark = pytest.mark.spark
WM5 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("t")


def run_windows(env, events, assigner, *, per_batch=None, bounded=False, watermark=WM5):
    rows = [{"k": k, "t": ts(t)} for k, t in events]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=per_batch, watermarks=watermark)
    sink = s.key_by("k").window(assigner).count().collect()
    handle = env.execute(bounded=bounded).wait(timeout=180)
    assert handle.done, "job did not finish"
    return window_rows(sink.rows), handle.metrics()


def test_late_row_for_a_closed_window_is_dropped_and_counted(env):
    # Batches of 2. After batch 0 the watermark is 15000 - 5000 = 10000 (Flink: 9999); it is
    # emitted at the end of batch 1, closing [0, 10000). In batch 2, (a, 9999) is late for a
    # closed window (Flink: max_timestamp 9999 <= 9999) and dropped; (a, 10000) is not.
    events = [("a", 1000), ("a", 15000), ("b", 20000), ("b", 20001), ("a", 9999), ("a", 10000)]
    got, metrics = run_windows(env, events, TumblingEventTimeWindows.of(fk.seconds(10)), per_batch=2)
    assert got == {("a", 0, 10000, 1): 1, ("a", 10000, 20000, 2): 1, ("b", 20000, 30000, 2): 1}
    assert metrics["late_rows_dropped"] == 1
    assert metrics["input_rows"] == 6


@pytest.mark.parametrize("bounded", [False, True])
def test_a_deduplication_keyed_by_the_event_time_keeps_late_rows_as_flink_does(env, bounded):
    # Spark's dropDuplicates drops rows behind the watermark when a key column carries it; Flink's
    # deduplication has no notion of late. (b, 1000) comes after the watermark passed 190000.
    events = [("a", 0), ("a", 100_000), ("a", 200_000), ("b", 1000), ("a", 100_000), ("b", 1000)]
    rows = [{"k": k, "t": ts(t)} for k, t in events]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=1, watermarks=WM5)
    first = s.key_by(["k", "t"]).deduplicate()
    sink = first.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()  # (the mark goes on)
    kept = first.collect()
    handle = env.execute(bounded=bounded).wait(timeout=180)
    assert handle.done, "job did not finish"
    assert sorted((r["k"], r["t"]) for r in kept.rows) == sorted({(k, ts(t)) for k, t in events})
    # the window after it still drops the late row, as Flink's window would: its window [0, 10 s) closed long
    # before (a bounded run has no late rows: its watermark jumps to the end once all rows are read)
    assert sum(r["count"] for r in sink.rows) == (4 if bounded else 3)


@pytest.mark.parametrize("before", ["select", "filter"])
def test_a_finite_stream_with_a_select_or_filter_before_its_watermark_fires_its_last_windows(env, before):
    """The end of input has to reach the watermark through the row operations before it. It
    did not: the select (or filter) dropped the end-of-input row, the watermark never reached
    the end of time, and the job ended with its last windows never emitted (0 rows out)."""
    rows = [{"k": k, "ms": t} for k, t in [("a", 1_000), ("a", 12_000), ("b", 13_000), ("a", 14_000)]]
    s = env.from_collection(rows, "k string, ms bigint", rows_per_batch=2)
    if before == "filter":
        s = s.filter("k <> 'x'")
    s = s.with_column("t", "timestamp_millis(ms)").assign_timestamps_and_watermarks(WM5)
    sink = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    handle = env.execute().wait(timeout=180)
    assert handle.done
    assert window_rows(sink.rows) == {("a", 0, 10000, 1): 1, ("a", 10000, 20000, 2): 1, ("b", 10000, 20000, 1): 1}
    assert handle.metrics()["input_rows"] == 4


def test_a_python_map_before_the_watermark_of_a_finite_stream_is_refused(env):
    """A Python function cannot pass the end-of-input row on: refused before anything runs, not
    run to an end without its last windows."""
    rows = env.from_collection([{"k": "a", "ms": 1}], "k string, ms bigint")
    s = rows.map(lambda r: {**r, "t": r["ms"]}, output_schema="k string, ms bigint, t bigint")
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("t", unit="ms")
    s.assign_timestamps_and_watermarks(wm).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    refused = r"the end of the finite source collection\(1 rows\) cannot pass a Python function before this watermark"
    with pytest.raises(fk.errors.UnsupportedError, match=refused):
        env.execute()


def test_watermark_is_emitted_after_the_batch_that_follows_it(env):
    # The watermark computed from batch 0 fires windows at the end of batch 1, after batch 1's
    # elements: (a, 9999) arriving in batch 1 still counts (documented in explain()).
    events = [("a", 1000), ("a", 15000), ("a", 9999)]
    got, metrics = run_windows(env, events, TumblingEventTimeWindows.of(fk.seconds(10)), per_batch=2)
    assert got == {("a", 0, 10000, 2): 1, ("a", 10000, 20000, 1): 1}
    assert metrics["late_rows_dropped"] == 0


def test_touching_sessions_merge_as_in_flink(env):
    events = [("a", 0), ("a", 10_000), ("a", 30_000), ("b", 0), ("b", 9_999)]
    got, _ = run_windows(env, events, EventTimeSessionWindows.with_gap(fk.seconds(10)))
    assert got == {("a", 0, 20_000, 2): 1, ("a", 30_000, 40_000, 1): 1, ("b", 0, 19_999, 2): 1}


def test_sliding_windows_match_flink_assignment(env):
    events = [("a", t) for t in (0, 2_500, 4_999, 5_000, 7_000, 12_000)]
    assigner = SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5))
    got, _ = run_windows(env, events, assigner, per_batch=3)
    assert got == reference_counts(events, assigner)


def test_window_offset_and_aggregates(env):
    rows = [{"k": "a", "t": ts(t), "v": v} for t, v in ((1_000, 3), (2_500, 4), (6_000, 10))]
    s = env.from_collection(rows, "k string, t timestamp, v bigint", watermarks=WM5)
    w = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(5), offset=fk.seconds(2)))
    sink = w.aggregate(n="count", total=("sum", "v"), lo=("min", "v"), hi=("max", "v"), mean=("avg", "v")).collect()
    env.execute().wait(timeout=120)
    got = sorted((r["window_start"], r["n"], r["total"], r["lo"], r["hi"], r["mean"]) for r in sink.rows)
    assert got == [(ts(-3_000), 1, 3, 3, 3, 3.0), (ts(2_000), 2, 14, 4, 10, 7.0)]


out_of_order = st.lists(
    st.tuples(st.sampled_from("abc"), st.integers(0, 60_000)), min_size=1, max_size=40
).map(lambda evs: sorted(evs, key=lambda e: e[1]))


def jitter(events, seed, bound_ms=4_000):
    """Shuffle events within the watermark bound: out of order, but never late."""
    rnd = random.Random(seed)
    keyed = sorted(events, key=lambda e: e[1] + rnd.randint(0, bound_ms))
    return keyed


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=out_of_order, seed=st.integers(0, 10_000), kind=st.sampled_from(["tumbling", "sliding", "session"]))
def test_bounded_equals_unbounded_equals_reference(spark, tmp_path_factory, events, seed, kind):
    assigner = {
        "tumbling": TumblingEventTimeWindows.of(fk.seconds(10)),
        "sliding": SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5)),
        "session": EventTimeSessionWindows.with_gap(fk.seconds(3)),
    }[kind]
    shuffled = jitter(events, seed)
    results = []
    for bounded in (False, True):
        env = fk.StreamEnvironment(app="prop", spark=spark, checkpoint_dir=str(tmp_path_factory.mktemp("ck")))
        got, _ = run_windows(env, shuffled, assigner, per_batch=7, bounded=bounded)
        results.append(got)
    assert results[0] == results[1] == reference_counts(shuffled, assigner)

