"""Flink SQL's Kafka tables on Spark against the real broker: the record's metadata read as columns."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid

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
