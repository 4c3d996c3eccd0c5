"""One bucket of the general operator, without Spark: run_bucket over pandas batches.

Pre-aggregating on-time elements per pane (per pre-merged session for session windows)
must give exactly what element-by-element processing gives, for every trigger that does
not read elements.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from funke.pyflink.datastream.window import SlidingCountTrigger
from funke.semantics.evictors import CountEvictor
from funke.semantics.functions import AcceptsPartials, CountAggregate, MaxAggregate, NamedAggregates, SumAggregate
from funke.semantics.time import seconds
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowReduce, WindowSpec
from funke.semantics.windows import (
    EventTimeSessionWindows,
    GlobalWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from funke.spark.general.buckets import python_rows
from funke.spark.general.preaggregate import PARTIAL_N, pre_shuffle
from funke.spark.general.program import BUCKET, CONTROL, DROPPED, OUT_SEQ, TS, Output, PreAggregate, Program
from funke.spark.general.run import batch_function, run_bucket
from funke.triggers import ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, EventTimeTrigger, PurgingTrigger

AGGS = (("count", None), ("sum", "v"), ("max", "v"))


def program(assigner, trigger, lateness, pre, before_shuffle=False):
    named = NamedAggregates((("n", CountAggregate()), ("total", SumAggregate("v")), ("top", MaxAggregate("v"))))
    spec = WindowSpec.of(assigner, trigger=trigger, allowed_lateness=lateness)
    fn = WindowAggregate(AcceptsPartials(named) if pre else named)
    outputs = (Output(None, (("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("n", "bigint"), ("total", "bigint"), ("top", "bigint"))),)
    pane = assigner.size_ms if isinstance(assigner, TumblingEventTimeWindows) else 1_000
    gap = assigner.gap_ms if isinstance(assigner, EventTimeSessionWindows) else None
    return Program(
        "w", lambda: WindowOperator(spec, fn), ("k",), ("k", "v"), outputs, window_result=True,
        types={"k": "string", "v": "bigint"}, preaggregate=PreAggregate(pane, 0, AGGS, gap, before_shuffle) if pre else None,
    )


def elements(rows):
    return pd.DataFrame(
        {CONTROL: [False] * len(rows), TS: [t for _, t, _ in rows], "k": [k for k, _, _ in rows], "v": pd.array([v for _, _, v in rows], dtype="Int64")}
    )


#: What a partition's pre-aggregated rows look like on their way to the buckets (``preaggregate.pre_shuffled``).
PARTIAL_ROWS = pa.schema(
    [(BUCKET, pa.int32()), (TS, pa.int64()), ("k", pa.string()), (PARTIAL_N, pa.int64()), ("fk_p_1", pa.int64()), ("fk_p_2", pa.int64())]
)


def shuffled(prog, partitions):
    """``partitions`` (lists of rows), each pre-aggregated as ``mapInArrow`` would, then put together as a bucket receives them."""
    out = []
    for rows in partitions:
        frame = elements(rows).drop(columns=CONTROL).assign(**{BUCKET: 0})
        batch = pa.RecordBatch.from_pandas(frame, preserve_index=False)
        out += [b.to_pandas().assign(**{CONTROL: False}) for b in pre_shuffle(prog, PARTIAL_ROWS)(iter([batch]))]
    return pd.concat(out, ignore_index=True) if out else None


def run(prog, batches):
    snap, out = None, []
    for i, (rows, wm, pt) in enumerate(batches):
        if prog.preaggregate is not None and prog.preaggregate.before_shuffle:  # rows: a list of partitions
            frame = shuffled(prog, rows) if rows else elements([]).drop(columns="v")
        else:
            frame = elements(rows)
        res, snap = run_bucket(prog, snap, frame, spark_watermark=wm, processing_time=pt)
        res = res.drop(columns=[OUT_SEQ]).astype(object)
        out += [(i, *r) for r in res.where(res.notna(), None).itertuples(index=False, name=None)]
    return out


ASSIGNERS = {
    "tumbling": TumblingEventTimeWindows.of(seconds(5)),
    "sliding": SlidingEventTimeWindows.of(seconds(6), seconds(2)),
    "session": EventTimeSessionWindows.with_gap(seconds(2)),
}
TRIGGERS = {
    "default": None,
    "continuous-event": ContinuousEventTimeTrigger.of(seconds(2)),
    "continuous-processing": ContinuousProcessingTimeTrigger.of(seconds(1)),
    "purging": PurgingTrigger.of(EventTimeTrigger.create()),
}
element = st.tuples(st.sampled_from("ab"), st.integers(0, 30_000), st.integers(-5, 5))
batch = st.lists(element, max_size=12)
maybe_null = st.tuples(st.sampled_from("ab"), st.integers(0, 30_000), st.none() | st.integers(-5, 5))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(batch, min_size=1, max_size=6),
    st.sampled_from(["tumbling", "sliding", "session"]),
    st.sampled_from(["default", "continuous-event", "continuous-processing", "purging"]),
    st.sampled_from([0, 3_000]),
)
def test_preaggregation_equals_one_by_one(batches, kind, trig, lateness):
    assigner = ASSIGNERS[kind]
    if kind == "session" and trig.startswith("continuous"):
        trig = "default"  # sessions pre-merge only under event-time triggers
    trigger = TRIGGERS[trig]
    schedule, seen = [], 0
    for i, rows in enumerate(batches):
        schedule.append((rows, seen - 2_000 if seen else 0, 1_000 * i))  # Spark's watermark: max seen - bound
        seen = max([seen, *(t for _, t, _ in rows)])
    schedule.append(([], 10**15, 1_000 * len(batches)))
    plain = run(program(assigner, trigger, lateness, pre=False), schedule)
    pre = run(program(assigner, trigger, lateness, pre=True), schedule)
    assert sorted(pre, key=repr) == sorted(plain, key=repr)
    assert sum(1 for r in plain if r[1] == DROPPED) == sum(1 for r in pre if r[1] == DROPPED)


@settings(max_examples=100, deadline=None)
@example(batches=[[[("a", 11000, None), ("b", 3000, None), ("b", 0, None)]]], kind="sliding", trig="continuous-event")
@given(
    st.lists(st.lists(st.lists(maybe_null, max_size=8), min_size=1, max_size=2), min_size=1, max_size=6),
    st.sampled_from(["tumbling", "sliding"]),
    st.sampled_from(["default", "continuous-event", "continuous-processing", "purging"]),
)
def test_preaggregation_before_the_shuffle_equals_one_by_one(batches, kind, trig):
    """Each batch comes from one or two partitions, each pre-aggregated on its own (late elements
    included) before reaching the bucket: the same windows, early firings and dropped counts as
    the partitions' rows one by one, partition after partition (the order a bucket sees them in).
    The example: Arrow's group-by put b's pane 0 before its pane 3 (its first arrival), and the
    continuous trigger aligned b's early firings to the wrong element."""
    assigner, trigger = ASSIGNERS[kind], TRIGGERS[trig]
    plain_schedule, pre_schedule, seen = [], [], 0
    for i, partitions in enumerate(batches):
        wm = seen - 2_000 if seen else 0
        plain_schedule.append(([r for p in partitions for r in p], wm, 1_000 * i))
        pre_schedule.append(([p for p in partitions if p], wm, 1_000 * i))
        seen = max([seen, *(t for p in partitions for _, t, _ in p)])
    end = ([], 10**15, 1_000 * len(batches))
    plain = run(program(assigner, trigger, 0, pre=False), [*plain_schedule, end])
    pre = run(program(assigner, trigger, 0, pre=True, before_shuffle=True), [*pre_schedule, end])
    assert sorted(pre, key=repr) == sorted(plain, key=repr)


def test_a_bounded_bucket_without_output_converts_to_arrow():
    """A bounded run's bucket that emits nothing (a window join's key without pairs) used to fail in
    Spark: pandas makes empty columns float64, and Arrow turns float64 into a string column as a
    ChunkedArray, which Spark's serializer cannot put in a record batch."""
    import pyarrow as pa

    prog = program(TumblingEventTimeWindows.of(seconds(10)), None, 0, False)
    no_rows = pd.DataFrame({CONTROL: pd.Series([], dtype=bool), TS: pd.Series([], dtype="int64"), "k": [], "v": []})
    out = batch_function(prog)(no_rows)
    assert len(out) == 0
    assert isinstance(pa.Array.from_pandas(out["k"], type=pa.string()), pa.Array)


def test_which_windows_pre_aggregate_before_the_shuffle():
    """Only where late elements need not be told apart (allowed lateness 0, no late side output)
    and the partials are numbers; sessions and triggers that read elements never."""
    import funke as fk
    from funke.spark.general.program import _preaggregate
    from funke.triggers import CountTrigger

    env = fk.StreamEnvironment(app="pre")
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.milliseconds(0)).with_timestamp_assigner("t")
    keyed = env.from_collection([], "k string, v bigint, s string, t timestamp", watermarks=wm).key_by("k")
    types = {"k": "string", "v": "bigint", "s": "string", "t": "timestamp"}
    tumbling = TumblingEventTimeWindows.of(seconds(5))

    def pre(windowed, **aggs):
        return _preaggregate(windowed.aggregate(**(aggs or {"n": "count", "total": ("sum", "v")})).node, types)

    assert pre(keyed.window(tumbling)).before_shuffle
    assert pre(keyed.window(SlidingEventTimeWindows.of(seconds(6), seconds(2)))).before_shuffle
    assert pre(keyed.window(tumbling).trigger(ContinuousProcessingTimeTrigger.of(seconds(1)))).before_shuffle
    assert not pre(keyed.window(tumbling).allowed_lateness(seconds(1))).before_shuffle
    assert not pre(keyed.window(tumbling).side_output_late_data(fk.OutputTag("late", "k string, v bigint, s string, t timestamp"))).before_shuffle
    assert not pre(keyed.window(tumbling), low=("min", "s")).before_shuffle
    assert not pre(keyed.window(EventTimeSessionWindows.with_gap(seconds(2)))).before_shuffle
    assert pre(keyed.window(tumbling).trigger(CountTrigger.of(3))) is None


def test_rows_reach_functions_as_plain_python_values():
    """A micro-batch's rows as the function sees them: ints stay ints where nulls made pandas use floats,
    every kind of null is None, timestamps carried as microseconds become datetimes (user rows only)."""
    from datetime import UTC, datetime

    import numpy as np

    prog = Program(
        "p", lambda: None, ("k",), ("k", "n", "x", "s", "t"), (), micros=frozenset({"t"}), user_rows=True,
        types={"k": "string", "n": "bigint", "x": "double", "s": "string", "t": "timestamp"},
    )  # fmt: skip
    frame = pd.DataFrame(
        {"k": ["a", "b"], "n": [7.0, np.nan], "x": [0.5, np.nan], "s": [None, "y"], "t": [1_000_000, None]}
    )
    rows = python_rows(frame, prog, convert=True)
    assert rows == [
        {"k": "a", "n": 7, "x": 0.5, "s": None, "t": datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)},
        {"k": "b", "n": None, "x": None, "s": "y", "t": None},
    ]
    assert type(rows[0]["n"]) is int and type(rows[0]["x"]) is float
    assert python_rows(frame, prog)[0]["t"] == 1_000_000  # not converted: the operator's own rows


def test_a_bucket_run_outside_a_spark_task_leaves_the_process_heap_alone(monkeypatch):
    """Workers freeze their heap once (PySpark collects garbage after every task); a driver or a test
    running a bucket in its own process must not have its heap frozen."""
    import gc

    from funke.spark.general import run as run_module

    monkeypatch.delenv("FUNKE_GC", raising=False)
    monkeypatch.setattr(run_module, "_heap_frozen", False)
    frozen = gc.get_freeze_count()
    prog = program(TumblingEventTimeWindows.of(seconds(10)), None, 0, False)
    batch_function(prog)(elements([("a", 1_000, 1)]))
    assert gc.get_freeze_count() == frozen and run_module._heap_frozen is False


def test_a_snapshot_holding_an_instance_of_a_class_pickle_cannot_name_is_carried_by_value():
    """State may hold instances of a class defined in the job's script (a PyFlink script runs as
    ``__main__``, which Spark's workers cannot import it from): such a snapshot is cloudpickled."""
    import pickle

    from funke.spark.general.run import dump_snapshot

    class Point:  # (a local class: plain pickle cannot name it either)
        def __init__(self, x):
            self.x = x

    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps({"state": [Point(1)]})
    assert pickle.loads(dump_snapshot({"state": [Point(3)]}))["state"][0].x == 3


def timed_program(spec):
    """A window of a reduce (sum of ``v``) whose results carry their time in ``t`` (``Program.window_time``)."""
    outputs = (Output(None, (("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("t", "timestamp"), ("v", "bigint"))),)
    reduce = WindowReduce(lambda a, b: {**b, "v": a["v"] + b["v"]})
    return Program("w", lambda: WindowOperator(spec, reduce), ("k",), ("k", "v"), outputs, window_result=True, window_time="t", types={"k": "string", "v": "bigint"})


def times(prog, batches):
    return [(r[0], r[-2], r[-1]) for r in run(prog, batches)]  # (the batch, t, v)


def test_a_count_window_s_results_carry_the_time_of_the_element_that_fired_it():
    """As PyFlink stamps a count window's results (Flink's Java operator: the global window's Long.MAX_VALUE); in
    epoch microseconds, as the operator carries timestamps. A sliding count window fires as PyFlink's does."""
    tumbling = timed_program(WindowSpec.count_window(2))
    rows = [("a", 1_000, 1), ("b", 1_500, 2), ("a", 500, 3), ("a", 9_000, 4), ("b", 7_000, 5), ("a", 2_000, 6)]
    assert times(tumbling, [(rows[:3], None, 0), (rows[3:], None, 0)]) == [(0, 500_000, 4), (1, 7_000_000, 7), (1, 2_000_000, 10)]
    sliding = timed_program(WindowSpec(GlobalWindows.create(), trigger=SlidingCountTrigger(3, 2), evictor=CountEvictor.of(3)))
    assert times(sliding, [(rows, None, 0)]) == [(0, 9_000_000, 8)]  # at a's 3rd element, then at its 5th (a has 4)
    untimed = [("a", None, 1), ("a", None, 2)]
    assert times(tumbling, [(untimed, None, 0)]) == [(0, None, 3)]


def test_a_processing_time_window_s_results_carry_its_last_millisecond():
    prog = timed_program(WindowSpec.of(TumblingProcessingTimeWindows.of(seconds(10))))
    rows = [("a", None, 1), ("a", None, 2)]
    assert times(prog, [(rows, None, 12_000), ([], None, 20_000)]) == [(1, 19_999_000, 3)]


def pairs(out):
    """A count window's results: (key, time in ms, sum)."""
    return sorted(((k, None if pd.isna(t) else int(t) // 1000, v) for k, t, v in zip(out["k"], out["t"], out["v"], strict=True)), key=str)


def test_batch_mode_reads_a_key_s_elements_in_timestamp_order():
    """``Program.time_ordered`` (Flink's BATCH runtime mode, a bounded run): a count window of two pairs each key's
    elements in timestamp order, ties and untimed elements as they came; without it, in arrival order."""
    prog = timed_program(WindowSpec.count_window(2))
    rows = [("a", 3_000, 1), ("a", 1_000, 2), ("b", 2_000, 3), ("a", 2_000, 4), ("a", 1_000, 5), ("b", None, 6)]
    frame = elements(rows)
    arrival, _ = run_bucket(prog, None, frame, spark_watermark=None, processing_time=None, final=True)
    ordered, _ = run_bucket(replace(prog, time_ordered=True), None, frame, spark_watermark=None, processing_time=None, final=True)
    assert pairs(arrival) == [("a", 1_000, 3), ("a", 1_000, 9), ("b", None, 9)]  # (a: 1 + 2 at 3 000, 1 000; 4 + 5 at 2 000, 1 000)
    assert pairs(ordered) == [("a", 1_000, 7), ("a", 3_000, 5), ("b", 2_000, 9)]  # (a: 2 + 5 at 1 000, 1 000; 4 + 1; b's untimed first)
