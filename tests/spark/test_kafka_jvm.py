"""Kafka through Spark's own connector (``spark-sql-kafka-0-10``), against the real broker on 127.0.0.1:9092.

Which reader a job gets (the connector where it serves, funke's Python data source where only it
does or the session lacks the connector), and issue 20's guarantees on the connector: typed rows,
Kafka's metadata and dead letters with topic, partition and offset; the at-least-once writer
writing the very records funke's own writer writes; a restart on the checkpoint into the
exactly-once sink with nothing lost or repeated; starting from a time and from given offsets;
Flink's per-partition watermarks. Streaming runs here are unbounded (the connector has no end in
a streaming query): each waits for what it must see, then stops.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter

import pytest

import funke as fk
from funke import OutputTag
from funke.connectors.kafka_jvm import CHECKED, pyspark_version
from funke.errors import EnvironmentSetupError
from funke.runtime.job import JobHandle
from funke.spark import kafka_jvm
from funke.windows import TumblingEventTimeWindows
from tests.spark import test_kafka_source as kafka_tests
from tests.spark.helpers import window_rows
from tests.spark.test_kafka_source import T0, event, produce, two_partitions

pytestmark = pytest.mark.spark
bootstrap, topic = kafka_tests.bootstrap, kafka_tests.topic  # the fixtures: the broker, fresh topics
CONNECTOR = "Spark's Kafka connector spark-sql-kafka-0-10_2.13"


def wait_for(cond, job: JobHandle, what: str, timeout: float = 240) -> None:
    """Until ``cond()`` holds (the job failing fails the test at once)."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {job.metrics()}"
        job.wait(timeout=0.2)


def read_topic(bootstrap: str, name: str, *, committed: bool = True) -> list[tuple[bytes | None, bytes, int]]:
    """Every record of ``name`` now, from the start to the end: (key, value, partition)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "funke-test-jvm", "enable.auto.commit": False,
                  "isolation.level": "read_committed" if committed else "read_uncommitted", "enable.partition.eof": True})  # fmt: skip
    try:
        parts = c.list_topics(name, timeout=30).topics[name].partitions
        c.assign([TopicPartition(name, p, OFFSET_BEGINNING) for p in parts])
        left, out, deadline = set(parts), [], time.monotonic() + 120
        while left:
            assert time.monotonic() < deadline, f"no end of {name} within 120 s"
            for m in c.consume(1000, timeout=0.5):
                if m.error() is not None and m.error().code() == KafkaError._PARTITION_EOF:
                    left.discard(m.partition())
                elif m.error() is None:
                    out.append((m.key(), m.value(), m.partition()))
        return out
    finally:
        c.close()


def test_the_connector_reads_where_it_serves_and_the_python_source_where_only_it_does(spark, bootstrap, monkeypatch):
    assert kafka_jvm.has_connector(spark)
    plain = fk.sources.kafka("t", schema="v bigint", bootstrap=bootstrap)
    ended = fk.sources.kafka("t", schema="v bigint", bootstrap=bootstrap, events=10)
    version = CHECKED[pyspark_version()]
    assert plain.engine().startswith(f"{CONNECTOR} {version} (pyspark {pyspark_version()}; checked)")
    assert kafka_jvm.reads_with_spark(spark, plain, streaming=True)
    # events=N ends a streaming read, which only funke's reader does; a bounded run still takes the connector
    assert ended.engine().startswith("streaming: funke's Python data source over confluent-kafka (events=N or ending= ends a streaming read")
    assert f"bounded runs (execute(bounded=True)): {CONNECTOR}" in ended.engine()
    assert not kafka_jvm.reads_with_spark(spark, ended, streaming=True)
    assert kafka_jvm.reads_with_spark(spark, ended, streaming=False)
    # librdkafka settings, and the choice of the user
    tuned = fk.sources.kafka("t", schema="v bigint", bootstrap=bootstrap, **{"fetch.min.bytes": 1})
    assert "(**options are librdkafka (confluent-kafka) settings)" in tuned.engine()
    python = fk.sources.kafka("t", schema="v bigint", bootstrap=bootstrap, connector="python")
    assert python.engine() == "funke's Python data source over confluent-kafka (asked for with connector='python')"
    assert not kafka_jvm.reads_with_spark(spark, python, streaming=True)
    with pytest.raises(EnvironmentSetupError, match="connector='spark': events=N or ending= ends a streaming read"):
        kafka_jvm.reads_with_spark(spark, fk.sources.kafka("t", schema="v bigint", events=3, connector="spark"), streaming=True)
    # FUNKE_KAFKA_CONNECTOR=python: no connector for any job, and explain() says why
    monkeypatch.setenv("FUNKE_KAFKA_CONNECTOR", "python")
    assert plain.engine() == "funke's Python data source over confluent-kafka (FUNKE_KAFKA_CONNECTOR=python)"


def test_a_session_without_the_connector_falls_back_to_the_python_source_and_says_so(bootstrap, topic, tmp_path):
    """A SparkSession the user started without the connector's jars (its own JVM, in a subprocess)."""
    t = topic(2)
    two_partitions(bootstrap, t, 10)
    script = textwrap.dedent(f"""
        import funke as fk
        from pyspark.sql import SparkSession
        from funke.errors import EnvironmentSetupError
        spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
        env = fk.StreamEnvironment(app="own-session", spark=spark)
        out = env.from_source(fk.sources.kafka({t!r}, schema="k string, v bigint", bootstrap={bootstrap!r})).collect()
        env.execute(bounded=True).wait()
        print("rows", sorted(r["v"] for r in out.rows))
        env = fk.StreamEnvironment(app="own-session-2", spark=spark)
        env.from_source(fk.sources.kafka({t!r}, schema="v bigint", bootstrap={bootstrap!r}, connector="spark")).collect()
        try:
            env.execute(bounded=True).wait()
        except EnvironmentSetupError as e:
            print("refused", e)
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "FUNKE_HOME": str(tmp_path)})  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert f"rows {list(range(10))}" in lines
    refused = next(line for line in lines if line.startswith("refused"))
    assert "connector='spark': this SparkSession has no Spark Kafka connector" in refused


def test_typed_rows_metadata_and_dead_letters_through_the_connector_and_its_writer_writes_funkes_records(spark, tmp_path, bootstrap, topic):
    t, spark_out, python_out = topic(2), topic(2), topic(2)
    two_partitions(bootstrap, t, 20)
    produce(bootstrap, t, [(0, None, b'{"k": "x", "v": "bad"}', T0), (1, b"gone", None, T0)])
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="jvm-rows", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    src = fk.sources.kafka(t, schema="k string, v bigint, note string", bootstrap=bootstrap, max_rows_per_batch=7,
                           metadata=["partition", "offset", "timestamp", "key"])  # fmt: skip
    rows = env.from_source(src)
    out = rows.collect()
    shaped = rows.select("k", "v", "note", "kafka_timestamp", "CAST(v AS DOUBLE) / 4 AS ratio", "CAST('NaN' AS DOUBLE) AS nan")
    shaped.sink_to(fk.sinks.kafka(spark_out, bootstrap=bootstrap, key=["k", "v"], delivery="at-least-once"), uid="spark-writer")
    shaped.sink_to(fk.sinks.kafka(python_out, bootstrap=bootstrap, key=["k", "v"], delivery="at-least-once", connector="python"),
                   uid="python-writer")  # fmt: skip
    plan = env.explain()
    assert f"why: {CONNECTOR} {CHECKED[pyspark_version()]}" in plan
    job = env.execute()
    wait_for(lambda: len(out.rows) >= 20 and len(dead.rows) >= 2, job, "20 rows and 2 dead letters")
    wait_for(lambda: len(read_topic(bootstrap, spark_out)) >= 20 and len(read_topic(bootstrap, python_out)) >= 20, job, "both topics")
    job.stop()
    assert sorted(out.rows, key=lambda r: r["v"]) == [kafka_tests.expected(i, i // 2) for i in range(20)]
    got = sorted((r["reason"].split("): ", 1)[1], r["raw"], r["position"]) for r in dead.rows)
    assert got == [("malformed json or a value that does not fit the schema", '{"k": "x", "v": "bad"}', f"{t}/0@10"),
                   ("record with no value (a tombstone)", "", f"{t}/1@10")]  # fmt: skip
    # Spark's writer: the same keys, in the same partitions (murmur2), with the same values as funke's
    written, expected = read_topic(bootstrap, spark_out), read_topic(bootstrap, python_out)
    def records(found):  # the values as parsed JSON, numbers as numbers: the two writers spell 1.0 "1.0" and "1"
        def number(x):
            return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else x

        return Counter((k, json.dumps({f: number(x) for f, x in json.loads(v).items()}, sort_keys=True), p) for k, v, p in found)

    assert len(written) == 20 and records(written) == records(expected)
    first = json.loads(next(v for k, v, _ in written if k == b"k0:0"))
    assert first == {"k": "k0", "v": 0, "note": "n0", "kafka_timestamp": _iso(T0), "ratio": 0.0, "nan": None}


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_restart_on_the_checkpoint_into_the_exactly_once_sink_neither_loses_nor_repeats(spark, tmp_path, bootstrap, topic):
    t, b = topic(2), topic(2)
    two_partitions(bootstrap, t, 60)
    src = fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, max_rows_per_batch=20)

    def run() -> JobHandle:
        env = fk.StreamEnvironment(app="jvm-restart", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        env.from_source(src).select("v", "(v * 2) AS twice").sink_to(fk.sinks.kafka(b, bootstrap=bootstrap, key="v"), uid="out")
        return env.execute()

    first = run()
    wait_for(lambda: len(read_topic(bootstrap, b)) >= 20, first, "a first committed batch")
    first.stop()  # mid-stream, or at its end: the restart must go on from its last committed batch either way
    two_partitions(bootstrap, t, 60, first=60)
    second = run()
    assert second.resumed
    wait_for(lambda: len(read_topic(bootstrap, b)) >= 120, second, "all 120 results")
    second.stop()
    values = Counter(json.loads(v)["v"] for _, v, _ in read_topic(bootstrap, b))
    assert sorted(values) == list(range(120)) and set(values.values()) == {1}


def test_starting_from_a_time_and_from_given_offsets_streaming(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    two_partitions(bootstrap, t, 40)  # record i at T0 + i s, partition i % 2, offset i // 2
    rewind = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=T0 + 25_000)
    cases = {"time": (rewind, list(range(25, 40))), "offsets": ({0: 18, 1: 3}, sorted([*range(36, 40, 2), *range(7, 40, 2)]))}
    for name, (starting, want) in cases.items():
        env = fk.StreamEnvironment(app=f"jvm-from-{name}", spark=spark, checkpoint_dir=str(tmp_path / name))
        out = env.from_source(fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, starting=starting)).collect()
        job = env.execute()
        # every record from the starting point on is read (the source's row count), and no other
        wait_for(lambda: job.metrics()["input_rows"] >= len(want) and len(out.rows) >= len(want), job, f"{len(want)} rows")
        job.stop()
        assert sorted(r["v"] for r in out.rows) == want and job.metrics()["input_rows"] == len(want), name


def record(part: int, seconds: int) -> tuple[int, None, bytes, int]:
    return (part, None, json.dumps({"k": "a", "t": seconds}).encode(), T0 + seconds * 1000)


def test_per_partition_watermarks_on_the_connector_follow_flinks_rule(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    # partition 0 is 90 s ahead of partition 1: Flink's watermark is the minimum, 10 s - 1 s - 1 ms
    produce(bootstrap, t, [record(0, 100), record(0, 101), record(0, 102), record(1, 10)])
    src = fk.sources.kafka(t, schema="k string, t bigint", bootstrap=bootstrap, metadata=["timestamp"])
    strategy = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("kafka_timestamp")
    env = fk.StreamEnvironment(app="jvm-split-wm", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    late = OutputTag("late")
    windowed = env.from_source(src, strategy).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10)))
    counted = windowed.side_output_late_data(late).count()
    out, lates = counted.collect(), counted.get_side_output(late).collect()
    assert "per partition" in env.explain()
    job = env.execute()
    wait_for(lambda: job.metrics()["input_rows"] >= 4, job, "the first four records")
    # partition 1 moves on to 25 s: the watermark passes 20 s, the window [10 s, 20 s) fires; nothing is late
    # (Spark's own watermark, 101 s, would have dropped 25 s), and [100 s, 110 s) waits for partition 1
    produce(bootstrap, t, [record(1, 25)])
    wait_for(lambda: len(out.rows) >= 1, job, "the window [10 s, 20 s)")
    job.stop()
    start = T0 + 10_000
    assert window_rows(out.rows) == {("a", start, start + 10_000, 1): 1}
    assert lates.rows == [] and job.metrics()["late_rows_dropped"] == 0


def test_the_connectors_writer_spells_values_as_funkes_writer_does(spark):
    """Column by column, the text Spark's expressions give (``record_text.value_text``) is the text funke's Arrow
    writer gives (``kafka_sink.as_text``): timestamps with and without a zone and a fraction, NaN and infinities."""
    import decimal

    import pyarrow as pa

    from funke.connectors.kafka_sink import as_text
    from funke.spark.record_text import value_text

    when = [dt.datetime(2024, 5, 1, 12, 0, 10), dt.datetime(2024, 5, 1, 12, 0, 10, 250000), dt.datetime(2024, 5, 1, 0, 0, 0, 1), None]
    rows = [(w, w, x, d, b, day, s) for w, x, d, b, day, s in zip(
        when, [1.5, float("nan"), float("inf"), None], [decimal.Decimal("12.30"), None, decimal.Decimal("-0.05"), decimal.Decimal("1")],
        [True, False, None, True], [dt.date(2024, 5, 1), None, dt.date(1, 1, 1), dt.date(9999, 12, 31)], ["a", 'say "hi"', None, ""],
        strict=True)]  # fmt: skip
    ddl = "t timestamp, n timestamp_ntz, x double, d decimal(10,2), b boolean, day date, s string"
    df = spark.createDataFrame(rows, ddl)
    got = df.select(*(value_text(df, c).alias(c) for c in df.columns)).collect()
    arrow = df.toArrow()
    for c in df.columns:
        assert [r[c] for r in got] == as_text(arrow.column(c), c).to_pylist(), c
