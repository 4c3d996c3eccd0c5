"""Per-partition watermarks of the Kafka source (Flink's per-split rule), against the real broker.

The source's watermark is the minimum over its partitions' watermarks (each partition's
largest event time - bound - 1), -infinity until every partition has sent a record, and with
``with_idleness`` a quiet partition stops holding it back. funke computes it on the driver
after each micro-batch; it reaches the window with the next micro-batch and is applied after
that batch's elements. One record per micro-batch (``max_rows_per_batch=1``) fixes which
record each batch reads: the least-read partition first, ties to the lowest.
"""

from __future__ import annotations

import json

import pytest

import funke as fk
from funke import OutputTag
from funke.windows import TumblingEventTimeWindows
from tests.spark import test_kafka_source as kafka_tests
from tests.spark.helpers import timestamp_to_millis, window_rows
from tests.spark.test_kafka_source import T0, finish, produce

pytestmark = pytest.mark.spark
bootstrap, topic = kafka_tests.bootstrap, kafka_tests.topic  # the fixtures: the broker, fresh topics


def record(part: int, seconds: int) -> tuple[int, None, bytes, int]:
    return (part, None, json.dumps({"k": "a", "t": seconds}).encode(), T0 + seconds * 1000)


def windows(env: fk.StreamEnvironment, src, strategy, late: OutputTag | None = None):
    s = env.from_source(src, strategy).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10)))
    if late is not None:
        s = s.side_output_late_data(late)
    counted = s.count()
    return counted.collect(), (counted.get_side_output(late).collect() if late is not None else None)


def at(seconds: int, count: int):
    start = T0 + seconds * 1000
    return ("a", start, start + 10_000, count)


SCHEMA = "k string, t bigint"
BOUND = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("kafka_timestamp")


def test_a_partition_behind_the_other_holds_the_watermark_back_where_spark_would_drop_it(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    # partition 0 is 90 s ahead of partition 1; batches read 100, 10, 101, 11, 102, 12
    produce(bootstrap, t, [record(0, 100), record(0, 101), record(0, 102), record(1, 10), record(1, 11), record(1, 12)])
    src = fk.sources.kafka(t, schema=SCHEMA, bootstrap=bootstrap, events=6, max_rows_per_batch=1, metadata=["timestamp"])
    env = fk.StreamEnvironment(app="kafka-split-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    late = OutputTag("late")
    out, lates = windows(env, src, BOUND, late)
    plan = env.explain()
    assert "per partition" in plan and "general" in plan
    job = finish(env.execute())
    # Flink: the watermark is min(partition 0, partition 1) = 12 s - 1 s - 1 ms at most: nothing is late
    assert window_rows(out.rows) == {at(10, 3): 1, at(100, 3): 1}
    assert lates.rows == [] and job.metrics()["late_rows_dropped"] == 0

    # Spark's one watermark from the largest event time over both partitions drops partition 1's later records
    spark_wm = fk.sources.kafka(t, schema=SCHEMA, bootstrap=bootstrap, events=6, max_rows_per_batch=1, metadata=["timestamp"],
                                partition_watermarks=False)  # fmt: skip
    env2 = fk.StreamEnvironment(app="kafka-spark-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck2"))
    out2, _ = windows(env2, spark_wm, BOUND)
    assert "per partition" not in env2.explain()
    job2 = finish(env2.execute())
    # Spark's watermark is 99 s after the first batch: partition 1's 11 s and 12 s come later and are dropped
    assert window_rows(out2.rows) == {at(10, 1): 1, at(100, 3): 1}
    assert job2.metrics()["late_rows_dropped"] == 2


def test_an_empty_partition_holds_the_watermark_until_with_idleness_lets_it_go(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    # only partition 0 gets records: 100 s, 101 s, then 5 s; partition 1 stays empty
    produce(bootstrap, t, [record(0, 100), record(0, 101), record(0, 5)])
    src = fk.sources.kafka(t, schema=SCHEMA, bootstrap=bootstrap, events=3, max_rows_per_batch=1, metadata=["timestamp"])

    # Flink's rule: a partition that has sent nothing holds the source's watermark at -infinity
    env = fk.StreamEnvironment(app="kafka-empty-part", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    late = OutputTag("late")
    out, lates = windows(env, src, BOUND, late)
    finish(env.execute())
    assert window_rows(out.rows) == {at(0, 1): 1, at(100, 2): 1}
    assert lates.rows == []

    # idle after 1 ms: partition 1 no longer counts, the watermark is 100 s - 1 s - 1 ms after the first
    # batch, applied after the second batch's record, and the third (5 s) is late
    env2 = fk.StreamEnvironment(app="kafka-idle-part", spark=spark, checkpoint_dir=str(tmp_path / "ck2"))
    out2, lates2 = windows(env2, src, BOUND.with_idleness(fk.milliseconds(1)), late)
    assert "quiet for 1 ms is skipped" in env2.explain()
    finish(env2.execute())
    assert window_rows(out2.rows) == {at(100, 2): 1}
    assert [(r["t"], timestamp_to_millis(r["kafka_timestamp"])) for r in lates2.rows] == [(5, T0 + 5_000)]
