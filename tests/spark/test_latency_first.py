"""``set_latency_mode("latency-first")`` on Spark: a window result leaves in the micro-batch whose
elements pass its end (same-batch firing), one batch before the default general path and Spark's
own window, with the same results."""

from __future__ import annotations

import datetime as dt

import funke as fk
from funke.windows import TumblingEventTimeWindows

T0 = dt.datetime(2024, 1, 1)

# Two rows a micro-batch; bound 1 s, windows of 10 s. Batch 1's 13 s passes [0 s, 10 s) (Flink's
# watermark 13 000 - 1 000 - 1 >= 9 999), batch 2's 22 s passes [10 s, 20 s); every row is within
# the bound of the largest before it, so none is late in either mode.
EVENTS = [("a", 1_000), ("b", 5_000), ("a", 12_000), ("b", 13_000), ("a", 21_500), ("b", 22_000), ("a", 23_000), ("a", 24_000)]


def run(spark, tmp_path, name: str, mode: str, path: str = "auto") -> dict[tuple[str, int, int], int]:
    """Window -> the micro-batch its row was written in."""
    env = fk.StreamEnvironment(app=name, spark=spark, checkpoint_dir=str(tmp_path / name)).set_latency_mode(mode)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    rows = [{"k": k, "ts": T0 + dt.timedelta(milliseconds=t)} for k, t in EVENTS]
    s = env.from_collection(rows, "k string, ts timestamp", rows_per_batch=2, watermarks=wm)
    sink = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).on_path(path).count().collect()
    plan = env.explain()
    assert ("latency-first:" in plan) == (mode == "latency-first" and path == "auto")
    env.execute().wait(120)
    when = {}
    for batch, out in sink.batches:
        for r in out:
            when[(r["k"], int((r["window_start"] - T0) / dt.timedelta(milliseconds=1)), r["count"])] = batch
    return when


def test_latency_first_fires_in_the_batch_whose_elements_pass_the_window_end(spark, tmp_path):
    fast = run(spark, tmp_path, "latency-first", "latency-first")
    general = run(spark, tmp_path, "general", "micro-batch", path="general")
    native = run(spark, tmp_path, "native", "micro-batch")
    assert (
        fast.keys()
        == general.keys()
        == native.keys()
        == {("a", 0, 1), ("b", 0, 1), ("a", 10_000, 1), ("b", 10_000, 1), ("a", 20_000, 3), ("b", 20_000, 1)}
    )
    for w in [("a", 0, 1), ("b", 0, 1), ("a", 10_000, 1), ("b", 10_000, 1)]:
        assert fast[w] + 1 == general[w] == native[w], (w, fast, general, native)
    # [0 s, 10 s) leaves with batch 1's rows, [10 s, 20 s) with batch 2's, a batch apart
    assert fast[("a", 10_000, 1)] == fast[("a", 0, 1)] + 1


def _is(kind):
    return lambda e: e["kind"] == kind


def cep_run(spark, tmp_path, name: str, mode: str) -> dict[tuple[str, str, str], int]:
    """An ``a`` followed by a ``b`` per key -> the micro-batch its match was written in."""
    from funke.cep import CEP, Pattern

    env = fk.StreamEnvironment(app=name, spark=spark, checkpoint_dir=str(tmp_path / name)).set_latency_mode(mode)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
    # two rows a batch: batch 1's 6 s passes the first match's events (6 000 - 1 000 - 1 >= 2 000), batch 2's
    # 10 s the second's (10 000 - 1 000 - 1 >= 7 500)
    events = [("a", 1_000), ("b", 2_000), ("a", 5_000), ("c", 6_000), ("b", 7_500), ("c", 10_000)]
    rows = [{"k": "x", "kind": kind, "ts": T0 + dt.timedelta(milliseconds=t)} for kind, t in events]
    s = env.from_collection(rows, "k string, kind string, ts timestamp", rows_per_batch=2, watermarks=wm)
    pattern = Pattern.begin("a").where(_is("a")).followed_by("b").where(_is("b"))
    sink = (
        CEP.pattern(s.key_by("k"), pattern)
        .select(
            lambda m: {"k": m["a"][0]["k"], "a": str(m["a"][0]["ts"]), "b": str(m["b"][0]["ts"])},
            output_schema="k string, a string, b string",
        )
        .collect()
    )
    env.execute().wait(120)
    return {(r["k"], r["a"], r["b"]): batch for batch, out in sink.batches for r in out}


def test_a_cep_pattern_in_latency_first_mode_matches_a_batch_sooner_with_the_same_matches(spark, tmp_path):
    fast = cep_run(spark, tmp_path, "cep-latency-first", "latency-first")
    default = cep_run(spark, tmp_path, "cep-default", "micro-batch")
    assert fast.keys() == default.keys() and len(fast) == 2, (fast, default)  # (a 1 s, b 2 s), (a 5 s, b 7.5 s)
    first = ("x", "2024-01-01 00:00:01+00:00", "2024-01-01 00:00:02+00:00")  # (match times are UTC)
    assert first in fast, fast
    assert fast[first] + 1 == default[first], (fast, default)
