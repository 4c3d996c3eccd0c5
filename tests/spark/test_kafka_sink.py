"""The Kafka sink against the real broker: exactly-once for read_committed consumers, replays skipped,
zombie transactions fenced and invisible, at-least-once as asked, clear errors for a down broker or a missing topic."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import socket
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

import funke as fk
from funke.connectors.base import BatchSink
from funke.connectors.kafka_sink import MARKER_TOPIC, KafkaSink, encode_values
from funke.errors import PlanError, SinkError
from funke.windows import TumblingEventTimeWindows
from tests.servers import ensure_kafka

from .helpers import ts

pytestmark = pytest.mark.spark
WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("t")
EVENTS = [("a", 1_000), ("b", 2_000), ("a", 12_000), ("a", 15_000), ("b", 31_000), ("a", 40_000)]
#: Counts per (key, window start ms) of EVENTS in 10 s tumbling windows.
EXPECTED = {("a", 0): 1, ("b", 0): 1, ("a", 10_000): 2, ("b", 30_000): 1, ("a", 40_000): 1}


def iso(ms: int) -> str:
    return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)).isoformat() + "Z"


#: The records a read_committed consumer must see: key, and the row as JSON with ISO-8601 window bounds.
EXPECTED_RECORDS = Counter(
    (k, json.dumps({"k": k, "window_start": iso(s), "window_end": iso(s + 10_000), "count": c}, separators=(",", ":")))
    for (k, s), c in EXPECTED.items()
)


@pytest.fixture(scope="module")
def bootstrap() -> str:
    return ensure_kafka()


@pytest.fixture
def topic(bootstrap):
    """A fresh topic name (the test or the sink creates it); deleted afterwards."""
    name = f"funke-test-{uuid.uuid4().hex[:10]}"
    yield name
    client = AdminClient({"bootstrap.servers": bootstrap})
    client.delete_topics([name])[name].exception(timeout=30)  # absent (never created) is fine


def make_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import NewTopic

    client = AdminClient({"bootstrap.servers": bootstrap})  # held until the future is done: its end cancels it
    client.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)
    deadline = time.monotonic() + 30
    while client.list_topics(name, timeout=10).topics[name].error is not None:  # created; until the metadata shows it
        assert time.monotonic() < deadline, f"topic {name} was created but its metadata did not show it in 30 s"
        time.sleep(0.05)


def read_topic(bootstrap: str, topic: str, *, committed: bool = True, timeout: float = 60) -> list[tuple[str | None, str]]:
    """Every record of the topic, (key, value), read to the end of each partition (the LSO when ``committed``)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"funke-test-{uuid.uuid4().hex[:8]}",
            "isolation.level": "read_committed" if committed else "read_uncommitted",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        out, ended, deadline = [], set(), time.monotonic() + timeout
        while len(ended) < len(partitions):
            assert time.monotonic() < deadline, f"did not reach the end of {topic} in {timeout} s (got {len(out)} records)"
            m = consumer.poll(0.5)
            if m is None:
                continue
            if m.error() is not None:
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                ended.add(m.partition())
                continue
            out.append((None if m.key() is None else m.key().decode(), m.value().decode()))
        return out
    finally:
        consumer.close()


def window_counts(env):
    """Counts per key of EVENTS in 10 s tumbling windows, two events per micro-batch."""
    rows = [{"k": k, "t": ts(t)} for k, t in EVENTS]
    s = env.from_collection(rows, "k string, t timestamp", rows_per_batch=2, watermarks=WM)
    return s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()


@dataclass(eq=False)
class Twice(BatchSink):
    """Writes every batch twice with the same id, as Spark does when it replays a batch."""

    inner: BatchSink

    def check(self, job):
        self.inner.check(job)

    def write_batch(self, df, batch_id, job):
        df = df.persist()
        try:
            self.inner.write_batch(df, batch_id, job)
            self.inner.write_batch(df, batch_id, job)
        finally:
            df.unpersist()


def test_windowed_job_reaches_a_read_committed_consumer_once_with_iso_window_bounds(env, bootstrap, topic):
    sink = fk.sinks.kafka(topic, bootstrap=bootstrap, key="k", create=True)
    window_counts(env).sink_to(Twice(sink))
    assert env.execute().wait(timeout=120).done
    assert Counter(read_topic(bootstrap, topic)) == EXPECTED_RECORDS
    markers = [int(v) for k, v in read_topic(bootstrap, MARKER_TOPIC) if k is not None and k.startswith(f"test:{topic}:")]
    assert len(markers) >= 2 and markers == sorted(set(markers))  # one marker per batch with rows, none repeated


@dataclass(eq=False)
class CrashAfterCommit(KafkaSink):
    """The first batch with rows commits, then the driver 'crashes' before Spark records the batch: Spark replays it."""

    crashes: list = field(default_factory=list)

    def write_table(self, data, *, job, batch_id, query_id):
        written = super().write_table(data, job=job, batch_id=batch_id, query_id=query_id)
        if data.num_rows and not self.crashes:
            self.crashes.append(batch_id)
            raise SinkError(f"simulated crash after batch {batch_id} committed")
        return written


def test_restarted_job_skips_the_replayed_batch_its_crashed_driver_committed(spark, tmp_path, bootstrap, topic):
    make_topic(bootstrap, topic, partitions=2)
    crashes, failures = [], []
    for _ in range(2):  # a new sink object per run, as a new driver has: it must read the marker from Kafka
        env = fk.StreamEnvironment(app="test", spark=spark, checkpoint_dir=str(tmp_path / "ckpt"))
        window_counts(env).sink_to(CrashAfterCommit(topic, bootstrap, key=("k",), crashes=crashes), uid="kafka")
        try:
            assert env.execute().wait(timeout=120).done
        except fk.JobFailedError as e:
            failures.append(str(e))
    assert len(failures) == 1 and "simulated crash after batch" in failures[0]
    assert Counter(read_topic(bootstrap, topic)) == EXPECTED_RECORDS


def test_write_batch_twice_with_the_same_id_writes_one_copy_also_from_a_new_sink(spark, bootstrap, topic):
    make_topic(bootstrap, topic)
    df = spark.createDataFrame([("a", 1), ("b", 2)], "k string, n bigint")
    query_id = str(uuid.uuid4())
    spark.sparkContext.setLocalProperty("sql.streaming.queryId", query_id)  # as in Spark's foreachBatch thread
    try:
        sink = fk.sinks.kafka(topic, bootstrap=bootstrap, key="k")
        sink.write_batch(df, 3, "replay")
        sink.write_batch(df, 3, "replay")  # remembered: skipped
        restarted = fk.sinks.kafka(topic, bootstrap=bootstrap, key="k")
        assert restarted.write_table(df.toArrow(), job="replay", batch_id=3, query_id=query_id) is False  # read from the marker
        assert restarted.write_table(df.toArrow(), job="replay", batch_id=4, query_id=query_id) is True
    finally:
        spark.sparkContext.setLocalProperty("sql.streaming.queryId", None)
    records = Counter(read_topic(bootstrap, topic))
    assert records == Counter({("a", '{"k":"a","n":1}'): 2, ("b", '{"k":"b","n":2}'): 2})  # batches 3 and 4 once each


def test_open_transaction_of_a_crashed_driver_is_fenced_and_invisible_to_read_committed(spark, bootstrap, topic):
    make_topic(bootstrap, topic)
    zombie = fk.sinks.kafka(topic, bootstrap=bootstrap)
    zombie.check("fence")
    producer = zombie.producer("fence")
    producer.begin_transaction()
    producer.produce(topic, '{"zombie":true}')
    assert producer.flush(30) == 0  # in the log, not committed: the driver "dies" here
    successor = fk.sinks.kafka(topic, bootstrap=bootstrap)
    successor.check("fence")  # the same transactional id: init_transactions fences the zombie and aborts its transaction
    data = spark.createDataFrame([(1,)], "n int").toArrow()
    assert successor.write_table(data, job="fence", batch_id=0, query_id="q") is True
    assert read_topic(bootstrap, topic) == [(None, '{"n":1}')]
    assert (None, '{"zombie":true}') in read_topic(bootstrap, topic, committed=False)  # it was written, then aborted
    with pytest.raises(KafkaException, match="(?i)fenced"):
        producer.commit_transaction(30)


def test_at_least_once_writes_csv_without_markers_and_says_so(env, spark, bootstrap, topic):
    make_topic(bootstrap, topic)
    sink = fk.sinks.kafka(topic, bootstrap=bootstrap, format="csv", key=["k", "window_start"], delivery="at-least-once")
    window_counts(env).sink_to(sink)
    assert "(at-least-once)" in env.explain() and sink.guarantee == "at-least-once"
    assert env.execute().wait(timeout=120).done
    expected = Counter((f"{k}:{iso(s)}", f"{k},{iso(s)},{iso(s + 10_000)},{c}") for (k, s), c in EXPECTED.items())
    assert Counter(read_topic(bootstrap, topic)) == expected
    df = spark.sql("SELECT 'x' AS k, 1L AS n, TIMESTAMP'1970-01-01 00:00:01' AS window_start")
    sink.write_batch(df, 7, "test")
    sink.write_batch(df, 7, "test")  # no marker: a replay is written again, as documented
    assert Counter(read_topic(bootstrap, topic))[("x:1970-01-01T00:00:01Z", "x,1,1970-01-01T00:00:01Z")] == 2


def test_explain_shows_the_chosen_guarantee_and_bad_options_are_plan_errors(env, bootstrap, topic):
    window_counts(env).sink_to(fk.sinks.kafka(topic, bootstrap=bootstrap, key="k"))
    assert f"kafka({topic}, json, key k, at {bootstrap}, confluent-kafka) (exactly-once)" in env.explain()
    with pytest.raises(PlanError, match="delivery must be 'exactly-once' .* or 'at-least-once' .* got 'exactly-twice'"):
        fk.sinks.kafka(topic, delivery="exactly-twice")
    with pytest.raises(PlanError, match="format must be one of json, csv, raw, got 'avro'"):
        fk.sinks.kafka(topic, format="avro")
    with pytest.raises(PlanError, match="topic must be"):
        fk.sinks.kafka("no spaces allowed")


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_broker_down_at_start_names_the_address_before_spark_starts(env, spark):
    address = f"127.0.0.1:{unused_port()}"
    window_counts(env).sink_to(fk.sinks.kafka("out", bootstrap=address))
    with pytest.raises(SinkError, match=rf"kafka sink 'out': cannot reach the Kafka broker at {address}: Connection refused"):
        env.execute()
    assert spark.streams.active == []


def test_missing_topic_is_an_error_unless_create_is_asked(env, spark, bootstrap, topic):
    window_counts(env).sink_to(fk.sinks.kafka(topic, bootstrap=bootstrap))
    with pytest.raises(
        SinkError, match=rf"topic '{topic}' does not exist on the Kafka cluster at {bootstrap}.*or pass create=True"
    ):
        env.execute()
    assert spark.streams.active == []
    other = fk.StreamEnvironment(app="test", spark=spark)
    window_counts(other).sink_to(fk.sinks.kafka(topic, bootstrap=bootstrap, key="k", create=True, partitions=3))
    assert other.execute(bounded=True).wait(timeout=120).done
    meta = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10).topics[topic]
    assert meta.error is None and len(meta.partitions) == 3
    records = read_topic(bootstrap, topic)
    assert Counter(records) == EXPECTED_RECORDS  # a bounded run: one transaction, no marker


def test_every_supported_type_becomes_valid_json_and_binary_is_refused(spark):
    df = spark.sql(
        "SELECT 'tab\\there \"quoted\" ünï' AS s, CAST(NULL AS STRING) AS missing, 7 AS i, 2.5D AS d, "
        "CAST('NaN' AS DOUBLE) AS nan, CAST(12.30 AS DECIMAL(10,2)) AS dec, CAST(1200 AS DECIMAL(10,2)) AS big, true AS b, DATE'2024-05-01' AS day, "
        "TIMESTAMP'2024-05-01 12:00:10.25' AS t, TIMESTAMP_NTZ'2024-05-01 12:00:10' AS local"
    )
    (value,) = encode_values(df.toArrow(), "json")
    assert json.loads(value, parse_float=decimal.Decimal) == {
        "s": 'tab\there "quoted" ünï',
        "missing": None,
        "i": 7,
        "d": decimal.Decimal("2.5"),
        "nan": None,
        "dec": decimal.Decimal("12.30"),
        "big": 1200,
        "b": True,
        "day": "2024-05-01",
        "t": "2024-05-01T12:00:10.25Z",
        "local": "2024-05-01T12:00:10",
    }
    assert '"dec":12.3,"big":1.2E+3,' in value  # numbers, as Flink's json format writes them (BigDecimal.stripTrailingZeros)
    with pytest.raises(SinkError, match="not column 'raw' of type binary"):
        encode_values(spark.sql("SELECT X'00' AS raw").toArrow(), "json")
