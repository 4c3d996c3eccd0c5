"""Files sources in event time: watermarks through Python functions into native windows."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.windows import TumblingEventTimeWindows

from .helpers import ts, window_rows

pytestmark = pytest.mark.spark
WM0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t")


def test_files_watermark_python_map_key_by_native_window_runs_streaming_to_its_end(spark, tmp_path):
    # Regression: the Python map drops Spark's watermark metadata, and the window used to
    # define a second watermark on top of the source's ("Redefining watermark is disallowed").
    # Files are bounded (Flink's FileSource): the streaming run ends by itself and its last
    # window, [20 s, 30 s), fires at the end of input; a bounded run gives the same windows.
    src = tmp_path / "in"
    rows = [("a", ts(1000), 1), ("a", ts(2000), 2), ("b", ts(3000), 3), ("a", ts(25000), 4)]
    spark.createDataFrame(rows, "k string, t timestamp, v bigint").coalesce(1).write.parquet(str(src))
    expected = {("a", 0, 10000, 2): 1, ("b", 0, 10000, 1): 1, ("a", 20000, 30000, 1): 1}
    for bounded in (False, True):
        env = fk.StreamEnvironment(app="files-wm", spark=spark, checkpoint_dir=str(tmp_path / f"ck-{bounded}"))
        source = fk.sources.files(str(src), schema="k string, t timestamp, v bigint")
        assert source.bounded
        s = env.from_source(source, watermarks=WM0)
        mapped = s.map(lambda r: {**r, "v": r["v"] * 10}, output_schema="k string, t timestamp, v bigint")
        sink = mapped.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
        handle = env.execute(bounded=bounded).wait(timeout=180)
        assert handle.done, bounded
        assert window_rows(sink.rows) == expected, bounded


def _write(spark, path, rows):
    spark.createDataFrame(rows, "k string, v bigint").coalesce(1).write.mode("append").json(str(path))


def test_bounded_files_read_the_listing_at_start_and_monitored_files_pick_up_new_ones(spark, tmp_path):
    src = tmp_path / "in"
    _write(spark, src, [("a", 1), ("b", 2)])
    _write(spark, src, [("c", 3)])
    env = fk.StreamEnvironment(app="files-bounded", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    bounded = env.from_source(fk.sources.files(str(src), schema="k string, v bigint", format="json", maxFilesPerTrigger=1)).collect()
    handle = env.execute()
    _write(spark, src, [("late", 9)])  # lands after the start: not in the listing
    assert handle.wait(timeout=180).done
    assert sorted(r["k"] for r in bounded.rows) == ["a", "b", "c"]
    assert [len(rows) for _, rows in sorted(bounded.batches)] == [2, 1]  # one file a micro-batch, oldest first

    env2 = fk.StreamEnvironment(app="files-monitored", spark=spark, checkpoint_dir=str(tmp_path / "ck2"))
    source = fk.sources.files(str(src), schema="k string, v bigint", format="json", monitor_continuously=fk.milliseconds(200))
    assert not source.bounded and "new files every 200 ms" in source.describe()
    monitored = env2.from_source(source).collect()
    handle = env2.execute()
    try:
        deadline = dt.datetime.now() + dt.timedelta(seconds=120)
        while len(monitored.rows) < 4 and dt.datetime.now() < deadline:
            handle.wait(timeout=0.5)
        _write(spark, src, [("new", 10)])
        while len(monitored.rows) < 5 and dt.datetime.now() < deadline:
            handle.wait(timeout=0.5)
        assert sorted(r["k"] for r in monitored.rows) == ["a", "b", "c", "late", "new"]
        assert not handle.done  # unbounded: it waits for more files
    finally:
        handle.stop()
    with pytest.raises(fk.PlanError, match="must be a positive interval"):
        fk.sources.files(str(src), schema="k string", monitor_continuously=0)


@pytest.mark.parametrize("bounded", [False, True])
def test_monotonous_timestamps_watermark_closes_windows_at_the_latest_event_time(env, bounded):
    # Flink: for_monotonous_timestamps() is bounded out-of-orderness 0 (watermark = max - 1 ms).
    # Batches of 2. Spark applies the watermark computed from batch N while running batch N+2
    # (see test_watermark_is_emitted_after_the_batch_that_follows_it): batch 1's (b, 10001)
    # makes it 10001 in batch 3, where (a, 9999) is late for the closed [0, 10000) and dropped.
    mono = fk.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("t")
    events = [("a", 1000), ("a", 9999), ("a", 10000), ("b", 10001), ("a", 20000), ("c", 20001), ("a", 9999)]
    rows = [{"k": k, "t": ts(t)} for k, t in events]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=2, watermarks=mono)
    sink = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    handle = env.execute(bounded=bounded).wait(timeout=180)
    assert handle.done
    if bounded:  # one batch: no row is late, the watermark jumps to +infinity at the end
        assert window_rows(sink.rows) == {("a", 0, 10000, 3): 1, ("a", 10000, 20000, 1): 1, ("b", 10000, 20000, 1): 1, ("a", 20000, 30000, 1): 1, ("c", 20000, 30000, 1): 1}
    else:
        assert window_rows(sink.rows) == {("a", 0, 10000, 2): 1, ("a", 10000, 20000, 1): 1, ("b", 10000, 20000, 1): 1, ("a", 20000, 30000, 1): 1, ("c", 20000, 30000, 1): 1}
        assert handle.metrics()["late_rows_dropped"] == 1


def test_global_window_with_end_of_stream_trigger_fires_once_at_end_of_input(spark, tmp_path):
    # Flink 1.19: one firing per key when the +infinity watermark ends the input, in a bounded
    # run and in a streaming run over the same finite input alike.
    from funke.windows import GlobalWindows

    events = [("a", 1000), ("b", 50_000), ("a", 900_000), ("a", 2000)]
    rows = [{"k": k, "t": ts(t)} for k, t in events]
    results = []
    for bounded in (False, True):
        env = fk.StreamEnvironment(app="eos", spark=spark, checkpoint_dir=str(tmp_path / f"ck{bounded}"))
        s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=2, watermarks=WM0)
        sink = s.key_by("k").window(GlobalWindows.create_with_end_of_stream_trigger()).count().collect()
        assert env.execute(bounded=bounded).wait(timeout=180).done
        results.append(sorted((r["k"], r["count"]) for r in sink.rows))
    assert results[0] == results[1] == [("a", 3), ("b", 1)]
