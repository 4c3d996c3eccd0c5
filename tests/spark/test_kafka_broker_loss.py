"""The Kafka broker lost mid-run, on a private broker (not the shared one on 9092): a job reads topic A and
writes topic B exactly-once; the broker is stopped while the job runs.

* ``on_broker_loss="fail"``: the job fails with an error naming the broker's address; once the broker is
  back, the job restarted on its checkpoint finishes and a ``read_committed`` read of B holds every result once.
* ``on_broker_loss="wait"``: the job rides out the outage and finishes with the same exact output.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import funke as fk
from funke.errors import JobFailedError
from funke.runtime.job import JobHandle
from funke.services import services
from funke.services.kafka import Kafka
from tests.servers import ensure_kafka

pytestmark = pytest.mark.spark
RECORDS = 300  # in A: the first half before the job starts, the rest after the outage
PER_BATCH = 40


def _free_port_pair() -> int:
    """A port P with P + 1 free too (the broker's listener and its KRaft controller's)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        if port + 1 < 65536:
            return port
    raise RuntimeError("no two free neighbouring ports on 127.0.0.1")


@pytest.fixture
def broker(tmp_path) -> Iterator[Kafka]:
    """A one-node broker of its own: its data, config, pid and log under tmp_path; the jars of the shared install."""
    ensure_kafka()  # installs the jars when missing
    shared = services(["kafka"])[0]
    assert isinstance(shared, Kafka)
    root = tmp_path / "services"
    (root / "kafka" / shared.version).mkdir(parents=True)
    (root / "kafka" / shared.version / "libs").symlink_to(shared.libs)
    private = Kafka(root, port=_free_port_pair())
    steps: list[str] = []
    private.start(steps.append)
    try:
        yield private
    finally:
        if private.answers() or (root / "kafka" / f"kafka-{private.port}.pid").exists():
            private.stop(steps.append)


def _topics(bootstrap: str) -> tuple[str, str]:
    from confluent_kafka.admin import AdminClient, NewTopic

    a, b = f"loss-a-{uuid.uuid4().hex[:8]}", f"loss-b-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(a, 2, 1), NewTopic(b, 2, 1)]).values():
        f.result(60)
    return a, b


def _produce(bootstrap: str, topic: str, values: range) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    failed: list[str] = []
    for i in values:
        p.produce(topic, json.dumps({"v": i}), partition=i % 2, on_delivery=lambda e, _: e and failed.append(str(e)))
    assert p.flush(60) == 0 and failed == []


def _committed(bootstrap: str, topic: str) -> list[int]:
    """Every ``v`` of B a read_committed consumer sees now, from the beginning to the end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({
        "bootstrap.servers": bootstrap, "group.id": "funke-test-loss", "enable.auto.commit": False,
        "isolation.level": "read_committed", "enable.partition.eof": True,
    })  # fmt: skip
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in (0, 1)])
        left, out, deadline = {0, 1}, [], time.monotonic() + 120
        while left:
            assert time.monotonic() < deadline, f"no end of {topic} read_committed within 120 s"
            for m in c.consume(1000, timeout=0.5):
                if m.error() is not None and m.error().code() == KafkaError._PARTITION_EOF:
                    left.discard(m.partition())
                elif m.error() is None:
                    out.append(json.loads(m.value())["v"])
        return out
    finally:
        c.close()


def _job(spark, ck: Path, bootstrap: str, a: str, b: str, mode: str, sink_timeout: float) -> JobHandle:
    src = fk.sources.kafka(a, schema="v bigint", bootstrap=bootstrap, events=RECORDS, max_rows_per_batch=PER_BATCH,
                           on_broker_loss=mode, broker_timeout=5)  # fmt: skip
    env = fk.StreamEnvironment(app=f"kafka-loss-{mode}", spark=spark, checkpoint_dir=str(ck))
    env.from_source(src).select("v", (fk.col("v") * 2).alias("twice")).sink_to(
        fk.sinks.kafka(b, bootstrap=bootstrap, key="v", timeout=sink_timeout), uid="out"
    )
    return env.execute()


def _wait_for(cond, job: JobHandle, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        job.wait(timeout=1)  # raises if the job failed


def _exactly_once(values: list[int]) -> None:
    counts = Counter(values)
    assert sorted(counts) == list(range(RECORDS)), f"missing {sorted(set(range(RECORDS)) - set(counts))[:10]}"
    assert {v: n for v, n in counts.items() if n != 1} == {}


def _failed_after_loss(job: JobHandle, broker: Kafka) -> str:
    """Stop the broker; the job must fail within 300 s: its error's text."""
    broker.stop(lambda _: None)
    deadline = time.monotonic() + 300
    with pytest.raises(JobFailedError) as failed:
        while time.monotonic() < deadline:
            job.wait(timeout=1)
    return str(failed.value)


def _ride_out_outage(job: JobHandle, broker: Kafka) -> None:
    """Stop the broker for longer than broker_timeout (5 s: a job in "fail" mode would give up); the job
    must keep running; start the broker again."""
    broker.stop(lambda _: None)
    down_since = time.monotonic()
    while time.monotonic() - down_since < 15:
        job.wait(timeout=1)  # raises if the job failed
    assert not job.done
    broker.start(lambda _: None)


def test_broker_lost_mid_run_fails_naming_it_and_a_restart_on_the_checkpoint_writes_every_result_once(spark, tmp_path, broker):
    bootstrap = broker.address
    a, b = _topics(bootstrap)
    _produce(bootstrap, a, range(RECORDS // 2))
    job = _job(spark, tmp_path / "ck", bootstrap, a, b, "fail", sink_timeout=10)
    _wait_for(lambda: len(_committed(bootstrap, b)) >= PER_BATCH, job, "a first committed batch in B")
    # whichever noticed first (the driver asking for offsets, a task reading, the sink committing) names the broker
    message = _failed_after_loss(job, broker)
    source_gave_up = f"Kafka at {bootstrap} did not answer for" in message and "on_broker_loss='wait'" in message
    assert source_gave_up or f"to topic {b} at {bootstrap} failed" in message, message
    assert spark.streams.active == []

    broker.start(lambda _: None)
    _produce(bootstrap, a, range(RECORDS // 2, RECORDS))
    _job(spark, tmp_path / "ck", bootstrap, a, b, "fail", sink_timeout=10).wait(timeout=600)
    _exactly_once(_committed(bootstrap, b))


def test_with_on_broker_loss_wait_the_job_rides_out_an_outage_and_finishes_exactly(spark, tmp_path, broker):
    bootstrap = broker.address
    a, b = _topics(bootstrap)
    _produce(bootstrap, a, range(RECORDS // 2))
    # the sink's commit may have to wait out the outage too: a timeout well above the broker's restart
    job = _job(spark, tmp_path / "ck", bootstrap, a, b, "wait", sink_timeout=300)
    _wait_for(lambda: len(_committed(bootstrap, b)) >= PER_BATCH, job, "a first committed batch in B")
    _ride_out_outage(job, broker)
    _produce(bootstrap, a, range(RECORDS // 2, RECORDS))
    job.wait(timeout=600)
    assert job.done
    _exactly_once(_committed(bootstrap, b))


# -- real-time mode (set_latency_mode("realtime")): the same settings, Spark's real-time trigger ---------------


def _realtime_job(spark, ck: Path, bootstrap: str, a: str, b: str, mode: str, sink_timeout: float) -> JobHandle:
    src = fk.sources.kafka(a, schema="v bigint", bootstrap=bootstrap, on_broker_loss=mode, broker_timeout=5,
                           partition_watermarks=False)  # fmt: skip
    env = fk.StreamEnvironment(app=f"kafka-loss-rt-{mode}", spark=spark, checkpoint_dir=str(ck), checkpoint_interval=fk.seconds(5))
    env.set_latency_mode("realtime")
    env.from_source(src).select("v", (fk.col("v") * 2).alias("twice")).sink_to(
        fk.sinks.kafka(b, bootstrap=bootstrap, key="v", timeout=sink_timeout, delivery="at-least-once"), uid="out"
    )
    return env.execute()


def _at_least_once(values: list[int]) -> None:
    assert sorted(set(values)) == list(range(RECORDS)), f"missing {sorted(set(range(RECORDS)) - set(values))[:10]}"


def test_in_real_time_mode_a_lost_broker_fails_the_job_naming_it_and_a_restart_loses_nothing(spark, tmp_path, broker):
    bootstrap = broker.address
    a, b = _topics(bootstrap)
    _produce(bootstrap, a, range(RECORDS // 2))
    job = _realtime_job(spark, tmp_path / "ck", bootstrap, a, b, "fail", sink_timeout=10)
    _wait_for(lambda: len(set(_committed(bootstrap, b))) >= RECORDS // 2, job, "the first half in B")
    message = _failed_after_loss(job, broker)
    assert bootstrap in message, message
    assert spark.streams.active == []

    broker.start(lambda _: None)
    _produce(bootstrap, a, range(RECORDS // 2, RECORDS))
    job = _realtime_job(spark, tmp_path / "ck", bootstrap, a, b, "fail", sink_timeout=10)
    _wait_for(lambda: len(set(_committed(bootstrap, b))) >= RECORDS, job, "every record in B")
    job.stop()
    _at_least_once(_committed(bootstrap, b))


def test_in_real_time_mode_with_on_broker_loss_wait_the_job_rides_out_an_outage(spark, tmp_path, broker):
    bootstrap = broker.address
    a, b = _topics(bootstrap)
    _produce(bootstrap, a, range(RECORDS // 2))
    job = _realtime_job(spark, tmp_path / "ck", bootstrap, a, b, "wait", sink_timeout=300)
    _wait_for(lambda: len(set(_committed(bootstrap, b))) >= RECORDS // 2, job, "the first half in B")
    _ride_out_outage(job, broker)
    _produce(bootstrap, a, range(RECORDS // 2, RECORDS))
    _wait_for(lambda: len(set(_committed(bootstrap, b))) >= RECORDS, job, "every record in B")
    job.stop()
    _at_least_once(_committed(bootstrap, b))
