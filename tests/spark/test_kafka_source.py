"""The Kafka source on Spark, against the real broker on 127.0.0.1:9092 (``funke services up kafka``).

Typed JSON rows and Kafka's metadata from two partitions in limited micro-batches, a
bounded run over the same records, bad records to the dead letters with topic, partition
and offset, a restart on the checkpoint that neither loses nor repeats a record, starting
from a time, from the latest offsets or from given offsets, the record timestamp as event
time, raw bytes, CSV, and clear errors for a broker that is down and a missing topic.
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import time
import uuid
from collections import Counter

import pytest

import funke as fk
from funke.errors import SourceError
from funke.runtime.job import JobHandle
from funke.windows import TumblingEventTimeWindows
from tests.servers import ensure_kafka
from tests.spark.helpers import window_rows

pytestmark = pytest.mark.spark
# Record timestamps (epoch ms) from the start of this hour: Kafka deletes records by their timestamps
# (7 days' retention), so older ones could vanish while a test reads them.
T0 = int(time.time()) // 3600 * 3_600_000


@pytest.fixture(scope="module")
def bootstrap() -> str:
    return ensure_kafka()


@pytest.fixture
def topic(bootstrap):
    """Makes fresh topics (``topic(partitions)``), deleted after the test."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    made: list[str] = []

    def make(partitions: int = 2) -> str:
        name = f"funke-test-{uuid.uuid4().hex[:12]}"
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)
        made.append(name)
        return name

    yield make
    if made:
        for f in admin.delete_topics(made).values():
            f.result(30)


def produce(bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes | None, int]]) -> None:
    """``(partition, key, value, timestamp ms)`` each, in order; waits until the broker has them all."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    failed: list[str] = []
    for part, key, value, ts in records:
        p.produce(topic, value=value, key=key, partition=part, timestamp=ts, on_delivery=lambda e, _: e and failed.append(str(e)))
    assert p.flush(30) == 0 and failed == []


def finish(job: JobHandle) -> JobHandle:
    """Wait until the job has read all of its input; fail the test (with its metrics) when it does not."""
    job.wait(timeout=300)
    assert job.done, f"the job did not finish: {job.metrics()}"
    return job


def event(i: int) -> bytes:
    return json.dumps({"k": f"k{i % 3}", "v": i, "note": f"n{i}"}).encode()


def two_partitions(bootstrap: str, topic: str, n: int, *, first: int = 0) -> None:
    produce(bootstrap, topic, [(i % 2, str(i).encode(), event(i), T0 + i * 1000) for i in range(first, first + n)])


def expected(i: int, offset: int) -> dict:
    return {"k": f"k{i % 3}", "v": i, "note": f"n{i}", "kafka_partition": i % 2, "kafka_offset": offset,
            "kafka_timestamp": dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=T0 + i * 1000), "kafka_key": str(i).encode()}  # fmt: skip


def test_rows_and_metadata_from_two_partitions_in_limited_batches_and_bounded_the_same(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    two_partitions(bootstrap, t, 60)
    src = fk.sources.kafka(t, schema="k string, v bigint, note string", bootstrap=bootstrap, events=60,
                           max_rows_per_batch=25, metadata=["partition", "offset", "timestamp", "key"])  # fmt: skip
    env = fk.StreamEnvironment(app="kafka-typed", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    out = env.from_source(src).collect()
    assert "Python data source over confluent-kafka" in env.explain()
    finish(env.execute())
    want = sorted((expected(i, i // 2) for i in range(60)), key=lambda r: r["v"])
    assert sorted(out.rows, key=lambda r: r["v"]) == want
    assert [len(rows) for _, rows in sorted(out.batches) if rows] == [25, 25, 10]
    # a batch takes from the partition read least so far: 13 + 12, then 12 + 13, then 5 + 5
    first = Counter(r["kafka_partition"] for r in sorted(out.batches)[0][1])
    assert first == {0: 13, 1: 12}

    bounded = fk.StreamEnvironment(app="kafka-typed-b", spark=spark)
    again = bounded.from_source(src).collect()
    finish(bounded.execute(bounded=True))
    assert sorted(again.rows, key=lambda r: r["v"]) == want


def test_events_n_takes_the_same_records_streaming_and_bounded_when_partitions_differ(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    produce(bootstrap, t, [(0, None, event(i), T0 + i) for i in range(30)] + [(1, None, event(100 + i), T0 + i) for i in range(5)])
    src = fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, events=20, max_rows_per_batch=3)
    env = fk.StreamEnvironment(app="kafka-events", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    out = env.from_source(src).collect()
    finish(env.execute())
    # partition 1 has 5 records: all of them, and 15 from partition 0
    want = sorted([*range(15), *range(100, 105)])
    assert sorted(r["v"] for r in out.rows) == want
    bounded = fk.StreamEnvironment(app="kafka-events-b", spark=spark)
    again = bounded.from_source(src).collect()
    finish(bounded.execute(bounded=True))
    assert sorted(r["v"] for r in again.rows) == want


def test_bad_records_go_to_the_dead_letters_with_topic_partition_and_offset(spark, tmp_path, bootstrap, topic):
    js, cs = topic(1), topic(1)
    produce(bootstrap, js, [
        (0, None, b'{"k": "a", "v": 1}', T0), (0, None, b'{"k": "a", "v": ', T0), (0, None, b'{"k": "a", "v": "two"}', T0),
        (0, b"gone", None, T0), (0, None, b"[1, 2]", T0), (0, None, b'{"k": "b", "v": 3, "extra": true}', T0),
    ])  # fmt: skip
    produce(bootstrap, cs, [(0, None, b"c,4", T0), (0, None, b"c,four", T0)])
    dead = fk.sinks.collect()
    env = fk.StreamEnvironment(app="kafka-dead", spark=spark, checkpoint_dir=str(tmp_path / "ck"), dead_letters=dead)
    a = env.from_source(fk.sources.kafka(js, schema="k string, v bigint", bootstrap=bootstrap, events=6))
    b = env.from_source(fk.sources.kafka(cs, schema="k string, v bigint", bootstrap=bootstrap, format="csv", events=2))
    out = a.union(b).collect()
    job = finish(env.execute())
    assert sorted((r["k"], r["v"]) for r in out.rows) == [("a", 1), ("b", 3), ("c", 4)]
    bad, none = "malformed {} or a value that does not fit the schema", "record with no value (a tombstone)"
    got = sorted((r["reason"].split("): ", 1)[1], r["raw"], r["position"]) for r in dead.rows)
    assert got == sorted([
        (bad.format("json"), '{"k": "a", "v": ', f"{js}/0@1"),
        (bad.format("json"), '{"k": "a", "v": "two"}', f"{js}/0@2"),
        (none, "", f"{js}/0@3"),
        (bad.format("json"), "[1, 2]", f"{js}/0@4"),
        (bad.format("csv"), "c,four", f"{cs}/0@1"),
    ])  # fmt: skip
    assert job.metrics()["dead_letters"] == 5


def _wait_for(cond, handle: JobHandle, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        handle.wait(timeout=0.2)


def test_restart_on_the_checkpoint_neither_loses_nor_repeats(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    two_partitions(bootstrap, t, 100)
    src = fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, events=200, max_rows_per_batch=30)
    sink = fk.sinks.collect()

    def run() -> JobHandle:
        env = fk.StreamEnvironment(app="kafka-restart", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        env.from_source(src).sink_to(sink, uid="rows")
        return env.execute()

    first = run()
    _wait_for(lambda: len(sink.batches) >= 2, first, "two batches")
    first.stop()  # mid-stream: only 100 of the 200 records exist yet
    two_partitions(bootstrap, t, 100, first=100)
    finish(run())  # the same CollectSink: a replayed batch replaces its rows
    assert sorted(r["v"] for r in sink.rows) == list(range(200))
    assert all(len(rows) <= 30 for _, rows in sink.batches)


def test_starting_from_a_time_from_given_offsets_and_from_the_latest(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    two_partitions(bootstrap, t, 40)  # record i at T0 + i s, partition i % 2

    def read(starting, events: int, app: str) -> list[int]:
        env = fk.StreamEnvironment(app=app, spark=spark)
        out = env.from_source(fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, starting=starting, events=events)).collect()
        finish(env.execute(bounded=True))
        return sorted(r["v"] for r in out.rows)

    rewind = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=T0 + 25_000)
    assert read(rewind, 1_000, "kafka-time") == list(range(25, 40))
    assert read(rewind.replace(tzinfo=dt.timezone.utc), 1_000, "kafka-time-utc") == list(range(25, 40))
    assert read({0: 18, 1: 3}, 1_000, "kafka-offsets") == sorted([*range(36, 40, 2), *range(7, 40, 2)])

    env = fk.StreamEnvironment(app="kafka-latest", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    out = env.from_source(fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, starting="latest", events=10)).collect()
    job = env.execute()
    # When the query fixes "latest" is Spark's business: keep producing pairs until it has read 10.
    i, deadline = 40, time.monotonic() + 120
    while not job.done:
        assert time.monotonic() < deadline, "the job read fewer than 10 records"
        two_partitions(bootstrap, t, 2, first=i)
        i += 2
        job.wait(timeout=0.5)
    job.wait(timeout=60)
    seen = sorted(r["v"] for r in out.rows)
    per = {p: [v for v in seen if v % 2 == p] for p in (0, 1)}
    assert all(v >= 40 for v in seen) and [len(per[0]), len(per[1])] == [5, 5]
    assert all(b - a == 2 for p in (0, 1) for a, b in zip(per[p], per[p][1:]))  # each partition from one point on


def test_the_record_timestamp_is_the_event_time_of_a_window_streaming_and_bounded(spark, tmp_path, bootstrap, topic):
    t = topic(2)
    # 30 records one second apart over both partitions, keys k0..k2
    two_partitions(bootstrap, t, 30)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("kafka_timestamp")
    src = fk.sources.kafka(t, schema="k string, v bigint", bootstrap=bootstrap, events=30, max_rows_per_batch=7, metadata=["timestamp"])
    want = Counter()
    for i in range(30):
        start = (T0 + i * 1000) // 10_000 * 10_000
        want[(f"k{i % 3}", start, start + 10_000)] += 1
    want = Counter({(*k, c): 1 for k, c in want.items()})
    for bounded in (False, True):
        env = fk.StreamEnvironment(app=f"kafka-wm-{bounded}", spark=spark, checkpoint_dir=str(tmp_path / f"ck{bounded}"))
        out = env.from_source(src, wm).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
        finish(env.execute(bounded=bounded))
        assert window_rows(out.rows) == want


def test_raw_records_are_key_and_value_bytes(spark, bootstrap, topic):
    t = topic(1)
    produce(bootstrap, t, [(0, b"k1", b"\x00\x01binary", T0), (0, None, b"", T0 + 1)])
    env = fk.StreamEnvironment(app="kafka-raw", spark=spark)
    out = env.from_source(fk.sources.kafka(t, format="raw", bootstrap=bootstrap, metadata=["offset"])).collect()
    finish(env.execute(bounded=True))
    assert out.rows == [{"key": b"k1", "value": b"\x00\x01binary", "kafka_offset": 0}, {"key": None, "value": b"", "kafka_offset": 1}]


def test_a_broker_that_is_down_and_a_missing_topic_fail_before_any_query_starts(spark, bootstrap, topic):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = fk.StreamEnvironment(app="kafka-down", spark=spark)
    env.from_source(fk.sources.kafka("t", schema="v bigint", bootstrap=f"127.0.0.1:{port}")).collect()
    with pytest.raises(SourceError, match=rf"cannot reach the Kafka broker at 127\.0\.0\.1:{port}: Connection refused; .*funke services up kafka"):
        env.execute()
    assert spark.streams.active == []

    missing = f"funke-test-missing-{uuid.uuid4().hex[:8]}"
    env = fk.StreamEnvironment(app="kafka-missing", spark=spark)
    env.from_source(fk.sources.kafka(missing, schema="v bigint", bootstrap=bootstrap)).collect()
    with pytest.raises(SourceError, match=rf"topic '{missing}' does not exist on the Kafka cluster at {bootstrap} .*or pass create=True"):
        env.execute()
    assert spark.streams.active == []


def test_create_makes_a_missing_topic_with_its_partitions(spark, tmp_path, bootstrap):
    from confluent_kafka.admin import AdminClient

    name = f"funke-test-created-{uuid.uuid4().hex[:8]}"
    env = fk.StreamEnvironment(app="kafka-create", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
    out = env.from_source(fk.sources.kafka(name, schema="k string, v bigint", bootstrap=bootstrap, create=True, partitions=3, events=6)).collect()
    job = env.execute()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        assert len(admin.list_topics(name, timeout=10).topics[name].partitions) == 3
        produce(bootstrap, name, [(i % 3, None, event(i), T0) for i in range(6)])
        finish(job)
        assert sorted(r["v"] for r in out.rows) == list(range(6))
    finally:
        admin.delete_topics([name])[name].result(30)


def test_arguments_are_checked_when_the_source_is_built():
    with pytest.raises(fk.PlanError, match="format=...\\) must be one of json, csv, raw"):
        fk.sources.kafka("t", schema="v bigint", format="avro")
    with pytest.raises(fk.SchemaError, match="needs schema="):
        fk.sources.kafka("t")
    with pytest.raises(fk.PlanError, match="starting=...\\): key 'x' is not a partition"):
        fk.sources.kafka("t", schema="v bigint", starting={"x": 1})
    with pytest.raises(fk.PlanError, match="metadata=...\\): unknown \\['headers'\\]"):
        fk.sources.kafka("t", schema="v bigint", metadata=["headers"])
    with pytest.raises(fk.PlanError, match="on_broker_loss"):
        fk.sources.kafka("t", schema="v bigint", on_broker_loss="retry")
