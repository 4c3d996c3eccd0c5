"""Flink SQL's Kafka tables on Spark against the real broker: the record's metadata read as columns."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import Any

import pytest

from funke.table import StreamTableEnvironment
from tests.servers import ensure_kafka
from tests.spark.test_kafka_source import produce

pytestmark = pytest.mark.spark

T0 = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC


def test_metadata_columns_read_the_record_s_timestamp_partition_offset_and_topic(env):
    """Six records in two partitions, each with its own timestamp, read through ``METADATA FROM`` columns declared
    before, between and after the physical ones. The rows and their column order are what PyFlink 2.3.0 printed for
    the same table and records (Flink's Kafka connector 5.0.0-2.2, by hand)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = ensure_kafka()
    topic = f"funke-test-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        "CREATE TABLE k (`event_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp', `partition` BIGINT METADATA VIRTUAL, "
        "`offset` BIGINT METADATA VIRTUAL, user_id BIGINT, behavior STRING, ts2 AS user_id + 1, "
        "tp STRING METADATA FROM 'topic' VIRTUAL, t3 AS CAST(event_time AS TIMESTAMP(3)), "
        "WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', "
        "'properties.group.id' = 'funke-test', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset')"
    )
    table = t_env.sql_query("SELECT * FROM k")
    assert table.columns == ("event_time", "partition", "offset", "user_id", "behavior", "ts2", "tp", "t3")
    out = t_env.to_data_stream(table).collect()
    produce(bootstrap, topic, [(i % 2, None, json.dumps({"user_id": i, "behavior": f"b{i}"}).encode(), T0 + i * 1500) for i in range(6)])
    job = env.execute()
    try:
        deadline = time.monotonic() + 240
        while len(out.rows) < 6 and time.monotonic() < deadline:  # (a condition, not a duration; a failed job raises)
            job.wait(0.2)
    finally:
        job.stop()
        admin.delete_topics([topic])[topic].result(30)
    at = lambda text: dt.datetime.fromisoformat(f"2023-11-14 22:13:{text}")
    flink = [  # (PyFlink's rows: event_time, partition, offset, user_id, behavior, ts2, t3; tp is the topic)
        (at("20.000"), 0, 0, 0, "b0", 1), (at("21.500"), 1, 0, 1, "b1", 2), (at("23.000"), 0, 1, 2, "b2", 3),
        (at("24.500"), 1, 1, 3, "b3", 4), (at("26.000"), 0, 2, 4, "b4", 5), (at("27.500"), 1, 2, 5, "b5", 6),
    ]  # fmt: skip
    rows = sorted(out.rows, key=lambda r: r["user_id"])
    got = [(r["event_time"].replace(tzinfo=None), r["partition"], r["offset"], r["user_id"], r["behavior"], r["ts2"]) for r in rows]
    assert got == flink
    assert {r["tp"] for r in rows} == {topic} and all(r["t3"].replace(tzinfo=None) == r["event_time"].replace(tzinfo=None) for r in rows)


def read_topic(bootstrap: str, topic: str, n: int) -> list[tuple[bytes | None, bytes | None]]:
    """The first ``n`` committed records of a one-partition topic, (key, value) each; waits for them (a condition)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "funke-test", "isolation.level": "read_committed"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    records: list[tuple[bytes | None, bytes | None]] = []
    deadline = time.monotonic() + 120
    try:
        while len(records) < n and time.monotonic() < deadline:
            m = consumer.poll(0.5)
            if m is not None and m.error() is None:
                records.append((m.key(), m.value()))
    finally:
        consumer.close()
    return records


def test_an_updating_result_is_written_to_an_upsert_kafka_table_as_flink_writes_it(env):
    """Flink's upsert-kafka sink: each record keyed by the primary key as a JSON object, a row's latest value, and a
    tombstone (the key, no value) for a row that is gone; an update's retraction is not written. Both topics' records,
    in order, are what PyFlink 2.3.0 wrote for the same statements (Flink's Kafka connector 5.0.0-2.2, by hand): a
    HAVING that drops a's update deletes a; without it a's second value follows its first (EXCEPT_KEY: no key columns
    in the value). It was refused ('a kafka table takes inserts only')."""
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = ensure_kafka()
    topics = [f"funke-test-{uuid.uuid4().hex[:12]}" for _ in range(2)]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
        f.result(30)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql("CREATE VIEW v AS SELECT * FROM (VALUES (1, 'a', 10), (2, 'b', 20), (3, 'a', 30), (4, 'c', 5)) AS x(id, k, amt)")
    for name, topic, extra in (("up", topics[0], ""), ("up2", topics[1], ", 'value.fields-include' = 'EXCEPT_KEY'")):
        t_env.execute_sql(
            f"CREATE TABLE {name} (k STRING, n BIGINT, total INT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
            f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', 'value.format' = 'json'{extra})"
        )
    statements = t_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO up SELECT k, COUNT(*), SUM(amt) FROM v GROUP BY k HAVING COUNT(*) < 2")
    statements.add_insert_sql("INSERT INTO up2 SELECT k, COUNT(*), SUM(amt) FROM v GROUP BY k")
    statements.execute().wait(300)
    try:
        having, plain = read_topic(bootstrap, topics[0], 4), read_topic(bootstrap, topics[1], 4)
    finally:
        admin.delete_topics(topics)
    by_key = lambda records: {k: [v for kk, v in records if kk == k] for k, _ in records}  # (each key's records in order)
    assert by_key(having) == {
        b'{"k":"a"}': [b'{"k":"a","n":1,"total":10}', None], b'{"k":"b"}': [b'{"k":"b","n":1,"total":20}'], b'{"k":"c"}': [b'{"k":"c","n":1,"total":5}'],
    }  # fmt: skip
    assert by_key(plain) == {
        b'{"k":"a"}': [b'{"n":1,"total":10}', b'{"n":2,"total":40}'], b'{"k":"b"}': [b'{"n":1,"total":20}'], b'{"k":"c"}': [b'{"n":1,"total":5}'],
    }  # fmt: skip


def test_scan_startup_mode_timestamp_and_specific_offsets_start_where_flink_starts(spark, tmp_path):
    """``'scan.startup.mode' = 'specific-offsets'`` reads each partition named from its offset (one not named from its
    earliest), ``'timestamp'`` each partition from its first record at or after the time; both were refused ('is not
    supported (earliest-offset, latest-offset)'). Two partitions of three records each, read in one bounded job."""
    from confluent_kafka.admin import AdminClient, NewTopic

    import funke as fk

    bootstrap = ensure_kafka()
    topic = f"funke-test-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    try:  # (partition p, offset o: user_id 10 * p + o, at T0 + that many seconds)
        produce(bootstrap, topic, [(p, None, json.dumps({"user_id": 10 * p + o}).encode(), T0 + (10 * p + o) * 1000) for p in (0, 1) for o in range(3)])
        env = fk.StreamEnvironment(app="startup", spark=spark, checkpoint_dir=str(tmp_path / "ck"))
        t_env = StreamTableEnvironment.create(env)
        outs = []
        for name, mode in (("offsets", "'specific-offsets', 'scan.startup.specific-offsets' = 'partition:1,offset:2'"),
                           ("times", f"'timestamp', 'scan.startup.timestamp-millis' = '{T0 + 1500}'")):  # fmt: skip
            t_env.execute_sql(
                f"CREATE TABLE {name} (user_id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
                f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', 'scan.startup.mode' = {mode})"
            )
            outs.append(t_env.to_data_stream(t_env.sql_query(f"SELECT user_id FROM {name}")).collect())
        env.execute(bounded=True).wait(300)
    finally:
        admin.delete_topics([topic])[topic].result(30)
    assert sorted(r["user_id"] for r in outs[0].rows) == [0, 1, 2, 12]
    assert sorted(r["user_id"] for r in outs[1].rows) == [2, 10, 11, 12]


def test_scan_bounded_mode_ends_the_read_where_flink_ends_it_streaming_and_bounded(spark, tmp_path):
    """``scan.bounded.mode`` (refused before): the read ends at the latest offsets of the job's start, before each
    partition's first record at or after a time, or at offsets given (a partition not named reads nothing), and a
    streaming job of such tables ends by itself. The streaming job starts with 3 records in each of two partitions;
    once the ``latest`` table has read its 6, three more are written: ``latest`` does not read them, ``offsets``
    waits for partition 0's offsets 3 and 4. The same tables, read after by a bounded job, end at the same places,
    ``latest`` at the later end. The rows are what PyFlink 2.3.0 read for such tables (Flink's Kafka connector
    5.0.0-2.2, by hand, streaming and batch)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    import funke as fk

    bootstrap = ensure_kafka()
    topic = f"funke-test-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    record = lambda p, o: (p, None, json.dumps({"user_id": 10 * p + o}).encode(), T0 + (10 * p + o) * 1000)
    modes = {
        "latest": "'latest-offset'",
        "times": f"'timestamp', 'scan.bounded.timestamp-millis' = '{T0 + 1500}'",
        "offsets": "'specific-offsets', 'scan.bounded.specific-offsets' = 'partition:0,offset:5'",
    }

    def tables(env: fk.StreamEnvironment) -> dict[str, Any]:
        t_env = StreamTableEnvironment.create(env)
        outs = {}
        for name, mode in modes.items():
            t_env.execute_sql(
                f"CREATE TABLE {name} (user_id BIGINT) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
                f"'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json', 'scan.bounded.mode' = {mode})"
            )
            outs[name] = t_env.to_data_stream(t_env.sql_query(f"SELECT user_id FROM {name}")).collect()
        return outs

    read = lambda outs: {name: sorted(r["user_id"] for r in out.rows) for name, out in outs.items()}
    try:
        produce(bootstrap, topic, [record(p, o) for p in (0, 1) for o in range(3)])
        streaming = tables(env := fk.StreamEnvironment(app="bounded-kafka", spark=spark, checkpoint_dir=str(tmp_path / "ck")))
        job = env.execute()
        deadline = time.monotonic() + 240
        while len(streaming["latest"].rows) < 6 and time.monotonic() < deadline:  # (a condition; a failed job raises)
            job.wait(0.2)
        produce(bootstrap, topic, [record(0, 3), record(0, 4), record(1, 3)])
        job.wait(300)
        assert job.all_finished(), "the streaming job of bounded tables did not end by itself"
        bounded = tables(env := fk.StreamEnvironment(app="bounded-kafka-2", spark=spark, checkpoint_dir=str(tmp_path / "ck2")))
        env.execute(bounded=True).wait(300)
    finally:
        admin.delete_topics([topic])[topic].result(30)
    assert read(streaming) == {"latest": [0, 1, 2, 10, 11, 12], "times": [0, 1], "offsets": [0, 1, 2, 3, 4]}
    assert read(bounded) == {"latest": [0, 1, 2, 3, 4, 10, 11, 12, 13], "times": [0, 1], "offsets": [0, 1, 2, 3, 4]}


def test_the_raw_format_reads_and_writes_each_record_s_value_as_one_string_column(spark, tmp_path):
    """'format' = 'raw' (refused before): a table of one STRING column is each record's value (UTF-8), a record with no
    value a NULL; written, the column's value is the record's value and a NULL a record with no value, through both of
    funke's Kafka writers (exactly-once: funke's transactional one; at-least-once: Spark's). The rows and the records
    written are what PyFlink 2.3.0 read and wrote for the same table and records (Flink's Kafka connector 5.0.0-2.2)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    import funke as fk

    bootstrap = ensure_kafka()
    source, *sinks = (f"funke-test-{uuid.uuid4().hex[:12]}" for _ in range(3))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(t, 1, 1) for t in (source, *sinks)]).values():
        f.result(30)
    values = [b"hello world", "gr\u00fc\u00dfe".encode(), None, b'{"a": 1}', b""]
    try:
        produce(bootstrap, source, [(0, b"k", v, T0 + i) for i, v in enumerate(values)])
        kafka = f"'connector' = 'kafka', 'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'raw'"

        def tables(app: str) -> tuple[fk.StreamEnvironment, StreamTableEnvironment]:  # (a job of its own, its own checkpoints)
            env = fk.StreamEnvironment(app=app, spark=spark, checkpoint_dir=str(tmp_path / app))
            t_env = StreamTableEnvironment.create(env)
            t_env.execute_sql(f"CREATE TABLE s (line STRING) WITH ({kafka}, 'topic' = '{source}', 'scan.bounded.mode' = 'latest-offset')")
            for name, topic, delivery in (("once", sinks[0], "exactly-once"), ("least", sinks[1], "at-least-once")):
                t_env.execute_sql(f"CREATE TABLE {name} (line STRING) WITH ({kafka}, 'topic' = '{topic}', 'sink.delivery-guarantee' = '{delivery}')")
            return env, t_env

        env, t_env = tables("raw-read")
        read = t_env.to_data_stream(t_env.sql_query("SELECT line, CHAR_LENGTH(line) AS n FROM s")).collect()
        env.execute().wait(300)  # (a bounded table: the job ends by itself)
        env, t_env = tables("raw-write")
        statements = t_env.create_statement_set()
        for name in ("once", "least"):
            statements.add_insert_sql(f"INSERT INTO {name} SELECT UPPER(line) FROM s")
        statements.execute().wait(300)
        written = [[v for _, v in read_topic(bootstrap, topic, len(values))] for topic in sinks]
    finally:
        admin.delete_topics([source, *sinks])
    assert [(r["line"], r["n"]) for r in read.rows] == [("hello world", 11), ("grüße", 5), (None, None), ('{"a": 1}', 8), ("", 0)]
    assert written == [[b"HELLO WORLD", "GRÜSSE".encode(), None, b'{"A": 1}', b""]] * 2
