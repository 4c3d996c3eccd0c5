"""How far a query is behind its source, as the dashboard's backpressure view asks it: records of a
Kafka topic and entries of a Redis stream after a micro-batch's end offset (real servers)."""

from __future__ import annotations

import uuid

import redis

import funke as fk
from funke.connectors.kafka_offsets import records_behind
from funke.connectors.redis_streams import entries_behind
from tests.servers import ensure_kafka, ensure_redis


def test_entries_of_a_redis_stream_after_a_batch_s_end():
    url = ensure_redis()
    key = f"funke-lag:{uuid.uuid4().hex}"
    r = redis.Redis.from_url(url)
    try:
        ids = [r.xadd(key, {"v": i}).decode() for i in range(5)]
        src = fk.sources.redis_stream(key, schema="v bigint", url=url)
        assert entries_behind(src, {"streams": {key: {"id": ids[1], "pos": 2}}, "ended": False}) == 3
        assert entries_behind(src, {"streams": {key: {"id": ids[4], "pos": 5}}, "ended": False}) == 0
        assert entries_behind(src, {"streams": {"another-stream": {"id": "0-0", "pos": 0}}}) is None  # not this source's offset
    finally:
        r.delete(key)


def test_records_of_a_kafka_topic_after_a_batch_s_end():
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = ensure_kafka()
    topic = f"funke-lag-{uuid.uuid4().hex[:12]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    try:
        p = Producer({"bootstrap.servers": bootstrap})
        for i in range(7):
            p.produce(topic, value=b"{}", partition=i % 2)  # 4 records in partition 0, 3 in partition 1
        assert p.flush(30) == 0
        src = fk.sources.kafka(topic, schema="v bigint", bootstrap=bootstrap)
        assert records_behind(src, {"at": {f"{topic}/0": 1, f"{topic}/1": 3}, "origin": {}, "ended": False}) == 3
        assert records_behind(src, {"at": {"elsewhere/0": 0}}) is None
    finally:
        admin.delete_topics([topic])[topic].result(30)
