"""YSB as published, from the CLI: ``funke ysb produce --to kafka`` then ``examples.ysb:kafka_job`` (Kafka → funke → Redis)."""

from __future__ import annotations

import json
import uuid

import pytest
import redis
from typer.testing import CliRunner

from funke.bench.reference import reference_counts
from funke.cli.main import app
from funke.bench.ysb_produce import json_values
from tests.servers import ensure_kafka, ensure_redis

pytestmark = pytest.mark.spark
EVENTS = 3_000


def topic_records(bootstrap: str, topic: str, partitions: int) -> dict[int, list[bytes]]:
    """Every record's value, per partition in offset order (read_committed, up to the end)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "funke-test", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})  # fmt: skip
    out: dict[int, list[bytes]] = {}
    try:
        for p in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
            consumer.assign([TopicPartition(topic, p, low)])
            values: list[bytes] = []
            while len(values) < high - low:
                batch = consumer.consume(10_000, timeout=10)
                assert batch, f"partition {p}: {len(values)} of {high - low} records came"
                values += [m.value() for m in batch if m.error() is None]
            out[p] = values
    finally:
        consumer.close()
    return out


def test_ysb_from_kafka_to_redis_streaming_and_bounded_give_the_reference_counts(spark):
    bootstrap, url = ensure_kafka(), ensure_redis()
    tag = uuid.uuid4().hex[:8]
    topic, prefix = f"funke-test-ysb-{tag}", f"ysb:test:{tag}:"
    client = redis.Redis.from_url(url, decode_responses=True)
    runner = CliRunner()

    def counts() -> dict[tuple[str, int], int]:
        return {
            (key.removeprefix(prefix), int(f)): int(v)
            for key in client.keys(f"{prefix}*")
            for f, v in client.hgetall(key).items()
        }

    try:
        produce = ["ysb", "produce", "--to", "kafka", "--topic", topic, "--partitions", "2", "--events", str(EVENTS),
                   "--rate", "0", "--bootstrap", bootstrap, "--redis", url]  # fmt: skip
        produced = runner.invoke(app, produce)
        assert produced.exit_code == 0, produced.output
        assert f"wrote {EVENTS:,} events to topic '{topic}' (2 partitions)" in produced.output
        # Event i is record i // 2 of partition i % 2, its value the generator's fields as JSON.
        values = json_values(0, EVENTS)
        assert topic_records(bootstrap, topic, 2) == {0: values[0::2], 1: values[1::2]}
        assert json.loads(values[0])["event_time"] == int(json.loads(values[0])["event_time"])

        expected = {(c, start): n for (c, start, _end), n in reference_counts(EVENTS).items()}
        job = ["run", "examples.ysb:kafka_job", "--events", str(EVENTS), "--no-live", "--fresh", "--name", f"ysb-kafka-{tag}",
               "--opt", f"topic={topic}", "--opt", f"bootstrap={bootstrap}", "--opt", f"redis={url}", "--opt", f"prefix={prefix}",
               "--opt", "batch_rows=1000"]  # fmt: skip
        streaming = runner.invoke(app, job)
        assert streaming.exit_code == 0, streaming.output
        assert counts() == expected
        client.delete(*client.keys(f"{prefix}*"))
        bounded = runner.invoke(app, [*job, "--bounded"])
        assert bounded.exit_code == 0, bounded.output
        assert counts() == expected
    finally:
        keys = client.keys(f"{prefix}*")
        if keys:
            client.delete(*keys)
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.delete_topics([topic])[topic].result(30)
