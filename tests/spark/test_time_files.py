"""Files sources in event time: watermarks through Python functions into native windows."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.windows import TumblingEventTimeWindows

from .helpers import ts, window_rows

pytestmark = pytest.mark.spark
WM0 = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("t")


def test_files_watermark_python_map_key_by_native_window_runs_streaming(spark, tmp_path):
    # Regression: the Python map drops Spark's watermark metadata, and the window used to
    # define a second watermark on top of the source's ("Redefining watermark is disallowed").
    src = tmp_path / "in"
    rows = [("a", ts(1000), 1), ("a", ts(2000), 2), ("b", ts(3000), 3), ("a", ts(25000), 4)]
    spark.createDataFrame(rows, "k string, t timestamp, v bigint").coalesce(1).write.parquet(str(src))
    env = fk.StreamEnvironment(app="files-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    s = env.from_source(fk.sources.files(str(src), schema="k string, t timestamp, v bigint"), watermarks=WM0)
    mapped = s.map(lambda r: {**r, "v": r["v"] * 10}, output_schema="k string, t timestamp, v bigint")
    sink = mapped.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    handle = env.execute()
    # The watermark after the only batch is 25000: [0, 10000) closes once a later batch runs.
    deadline = dt.datetime.now() + dt.timedelta(seconds=120)
    while len(sink.rows) < 2 and dt.datetime.now() < deadline and not handle.done:
        handle.wait(timeout=0.5)
    handle.stop()
    assert window_rows(sink.rows) == {("a", 0, 10000, 2): 1, ("b", 0, 10000, 1): 1}
