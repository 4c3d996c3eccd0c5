"""Same-batch firing (``set_latency_mode("latency-first")``), one bucket without Spark.

With ``Program.same_batch_bound_ms`` = B, a bucket run also moves its operator's watermark to
its largest event time so far - B - 1 (Flink's watermark for it) after the batch's elements, so
a window whose end the batch's own elements pass leaves in that run, not the next one.
"""

from __future__ import annotations

import pickle

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from funke.semantics.functions import AcceptsPartials, CountAggregate, NamedAggregates, SumAggregate
from funke.semantics.time import seconds
from funke.semantics.window_operator import WindowAggregate, WindowOperator, WindowSpec
from funke.semantics.windows import TumblingEventTimeWindows
from funke.spark.general.preaggregate import PARTIAL_MAX, PARTIAL_N, pre_shuffle
from funke.spark.general.program import BUCKET, CONTROL, DROPPED, TAG, TS, Output, PreAggregate, Program
from funke.spark.general.run import LATEST, run_bucket

BOUND = 2_000
AGGS = (("count", None), ("sum", "v"))


def program(bound: int | None = BOUND, pre: bool = False, before_shuffle: bool = False) -> Program:
    named = NamedAggregates((("n", CountAggregate()), ("total", SumAggregate("v"))))
    spec = WindowSpec.of(TumblingEventTimeWindows.of(seconds(10)))
    fn = WindowAggregate(AcceptsPartials(named) if pre else named)
    outputs = (
        Output(
            None,
            (("k", "string"), ("window_start", "timestamp"), ("window_end", "timestamp"), ("n", "bigint"), ("total", "bigint")),
        ),
    )
    return Program(
        "w", lambda: WindowOperator(spec, fn), ("k",), ("k", "v"), outputs, window_result=True,
        types={"k": "string", "v": "bigint"}, preaggregate=PreAggregate(10_000, 0, AGGS, None, before_shuffle) if pre else None,
        same_batch_bound_ms=bound,
    )  # fmt: skip


def elements(rows: list[tuple[str, int, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            CONTROL: [False] * len(rows),
            TS: [t for _, t, _ in rows],
            "k": [k for k, _, _ in rows],
            "v": pd.array([v for _, _, v in rows], dtype="Int64"),
        }
    )


def partials(prog: Program, rows: list[tuple[str, int, int]]) -> pd.DataFrame:
    """``rows`` pre-aggregated before the shuffle (``pre_shuffle``, with ``PARTIAL_MAX`` as ``preaggregate.pre_shuffled`` adds it)."""
    schema = pa.schema(
        [
            (BUCKET, pa.int32()),
            (TS, pa.int64()),
            ("k", pa.string()),
            (PARTIAL_N, pa.int64()),
            (PARTIAL_MAX, pa.int64()),
            ("fk_p_1", pa.int64()),
        ]
    )
    frame = elements(rows).drop(columns=CONTROL).assign(**{BUCKET: 0})
    out = pre_shuffle(prog, schema)(iter([pa.RecordBatch.from_pandas(frame, preserve_index=False)]))
    return pd.concat([b.to_pandas() for b in out], ignore_index=True).assign(**{CONTROL: False})


def windows(out: pd.DataFrame) -> list[tuple[str, int, int, int]]:
    main = out[out[TAG] == ""]
    return [
        (k, s // 1000, int(n), int(t))
        for k, s, n, t in zip(main["k"], main["window_start"], main["n"], main["total"], strict=True)
    ]


def test_a_window_the_batch_s_own_elements_pass_leaves_in_that_run():
    rows = [("a", 1_000, 1), ("a", 5_000, 2), ("a", 12_500, 4)]  # 12_500 - 2_000 - 1 >= 10_000 - 1
    out, snap = run_bucket(program(), None, elements(rows), spark_watermark=0, processing_time=0)
    assert windows(out) == [("a", 0, 2, 3)]
    assert snap is not None and snap[LATEST] == 12_500
    # Default: the window waits for the next batch, where Spark's watermark (12_500 - 2_000) passes its end.
    out, snap = run_bucket(program(None), None, elements(rows), spark_watermark=0, processing_time=0)
    assert windows(out) == [] and LATEST not in (snap or {})
    out, _ = run_bucket(program(None), snap, elements([]), spark_watermark=10_500, processing_time=1)
    assert windows(out) == [("a", 0, 2, 3)]


def test_the_local_watermark_stops_short_of_a_window_the_elements_do_not_pass():
    out, _ = run_bucket(program(), None, elements([("a", 1_000, 1), ("a", 11_999, 2)]), spark_watermark=0, processing_time=0)
    assert windows(out) == []  # 11_999 - 2_000 - 1 < 9_999
    out, _ = run_bucket(program(), None, elements([("a", 1_000, 1), ("a", 12_000, 2)]), spark_watermark=0, processing_time=0)
    assert windows(out) == [("a", 0, 1, 1)]  # 12_000 - 2_000 - 1 = 9_999: Flink's window end - 1


def test_the_largest_event_time_survives_the_snapshot_and_later_batches_build_on_it():
    _, snap = run_bucket(program(), None, elements([("a", 5_000, 1), ("a", 11_000, 1)]), spark_watermark=0, processing_time=0)
    snap = pickle.loads(pickle.dumps(snap))
    assert snap[LATEST] == 11_000
    # An earlier element does not lower it; the window [0, 10 s) fires once 12_000 is seen.
    out, snap = run_bucket(program(), snap, elements([("a", 9_500, 1)]), spark_watermark=9_000, processing_time=1)
    assert windows(out) == [] and snap[LATEST] == 11_000
    out, snap = run_bucket(program(), snap, elements([("b", 12_000, 1)]), spark_watermark=9_000, processing_time=2)
    assert windows(out) == [("a", 0, 2, 2)] and snap[LATEST] == 12_000
    out, snap = run_bucket(program(), snap, elements([]), spark_watermark=10_000, processing_time=3)
    assert windows(out) == [] and snap[LATEST] == 12_000


def test_an_older_snapshot_without_the_largest_event_time_is_read_as_none():
    _, old = run_bucket(program(None), None, elements([("a", 5_000, 1)]), spark_watermark=0, processing_time=0)
    assert old is not None and LATEST not in old
    out, snap = run_bucket(program(), old, elements([]), spark_watermark=0, processing_time=1)
    assert windows(out) == [] and LATEST not in (snap or {})
    out, snap = run_bucket(program(), old, elements([("a", 13_000, 2)]), spark_watermark=0, processing_time=1)
    assert windows(out) == [("a", 0, 1, 1)] and snap[LATEST] == 13_000
    # Back in the default mode, a snapshot with it restores (the key is dropped).
    out, snap = run_bucket(program(None), snap, elements([]), spark_watermark=0, processing_time=2)
    assert windows(out) == [] and LATEST not in snap


def test_partial_rows_use_their_largest_event_time_not_their_first():
    rows = [("a", 2_000, 1), ("a", 11_000, 2), ("a", 12_500, 4)]  # pane [10 s, 20 s): first 11_000, largest 12_500
    before = program(pre=True, before_shuffle=True)
    parts = partials(before, rows)
    assert parts[PARTIAL_MAX].tolist() == [2_000, 12_500] and parts[TS].tolist() == [2_000, 11_000]
    out, snap = run_bucket(before, None, parts, spark_watermark=0, processing_time=0)
    assert windows(out) == [("a", 0, 1, 1)] and snap[LATEST] == 12_500
    # Pre-aggregated inside the bucket: the elements' own times.
    out, snap = run_bucket(program(pre=True), None, elements(rows), spark_watermark=0, processing_time=0)
    assert windows(out) == [("a", 0, 1, 1)] and snap[LATEST] == 12_500


def test_without_same_batch_firing_partial_rows_carry_no_largest_event_time():
    frame = elements([("a", 1_000, 1)]).drop(columns=CONTROL).assign(**{BUCKET: 0})
    schema = pa.schema(
        [(BUCKET, pa.int32()), (TS, pa.int64()), ("k", pa.string()), (PARTIAL_N, pa.int64()), ("fk_p_1", pa.int64())]
    )
    out = list(
        pre_shuffle(program(None, pre=True, before_shuffle=True), schema)(
            iter([pa.RecordBatch.from_pandas(frame, preserve_index=False)])
        )
    )
    assert out[0].schema.names == schema.names


element = st.tuples(st.sampled_from("ab"), st.integers(0, 60_000), st.integers(-5, 5))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(element, max_size=10), min_size=1, max_size=6), st.booleans())
def test_same_results_as_the_default_and_never_later_on_data_within_the_bound(batches, pre):
    """Elements within the bound of the largest so far (late under neither schedule): the same
    windows, each leaving in the same run or an earlier one, and never before Spark's watermark
    of the next batch would pass its end."""
    seen, kept, schedule = 0, [], []
    for rows in batches:
        ok = []
        for r in rows:
            if r[1] > seen - BOUND:
                ok.append(r)
                seen = max(seen, r[1])
        kept.append(ok)
    seen = 0
    for rows in kept:
        schedule.append((rows, seen - BOUND if seen else 0))  # Spark's watermark: previous max - bound
        seen = max([seen, *(t for _, t, _ in rows)])
    schedule.append(([], 10**15))

    def fired(prog: Program) -> dict[tuple[str, int, int, int], int]:
        snap, when = None, {}
        for i, (rows, wm) in enumerate(schedule):
            out, snap = run_bucket(prog, snap, elements(rows), spark_watermark=wm, processing_time=i)
            assert not (out[TAG] == DROPPED).any()
            for w in windows(out):
                assert w not in when
                when[w] = i
        return when

    default, latency_first = fired(program(None, pre=pre)), fired(program(pre=pre))
    assert latency_first.keys() == default.keys()
    maxima = [max([0, *(t for rows, _ in schedule[: i + 1] for _, t, _ in rows)]) for i in range(len(schedule))]
    for w, i in latency_first.items():
        assert i <= default[w]
        end = w[1] + 10_000
        assert i == len(schedule) - 1 or maxima[i] - BOUND - 1 >= end - 1  # Flink's watermark after run i passes it


def test_latency_first_routes_event_time_windows_to_funke_s_operator_and_says_why():
    import funke as fk
    from funke.bench.ysb import check_options
    from funke.errors import PlanError

    def plan(mode: str) -> str:
        env = fk.StreamEnvironment().set_latency_mode(mode)
        wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("t", unit="ms")
        s = env.from_collection([{"k": "a", "t": 1}], "k string, t bigint", watermarks=wm)
        s.key_by("k").window(TumblingEventTimeWindows.of(seconds(10))).count().print()
        return env.explain()

    assert "latency-first:" not in plan("micro-batch")
    fast = plan("latency-first")
    assert "] general\n" in fast and "results leave in the micro-batch whose elements pass the watermark" in fast
    env = fk.StreamEnvironment()
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("t", unit="ms")
    env.from_collection([{"k": "a", "t": 1}], "k string, t bigint", watermarks=wm).key_by("k").window(
        TumblingEventTimeWindows.of(seconds(10))
    ).count()
    with pytest.raises(PlanError, match="call it before building the job"):
        env.set_latency_mode("latency-first")
    with pytest.raises(PlanError, match="give --latency-seconds too"):
        check_options(variant="base", bounded=False, exactly_once="on", latency_seconds=0, latency_mode="latency-first")
    with pytest.raises(PlanError, match="--latency-mode takes"):
        check_options(variant="base", bounded=False, exactly_once="on", latency_seconds=5, latency_mode="fast")
    check_options(variant="base", bounded=False, exactly_once="on", latency_seconds=5, latency_mode="latency-first")
