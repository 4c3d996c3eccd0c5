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
