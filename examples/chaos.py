"""A self-checking job for exactly-once under failures (``funke bench chaos``, ``tests/spark/test_chaos.py``).

Event ``i`` belongs to key ``k{i % KEYS}`` with sequence number ``i // KEYS`` and event time
``i * MS_PER_EVENT`` ms. Two outputs, each its own Spark query, both to PostgreSQL:

* ``<table>``: event-time counts per key per 10 s window (the native path);
* ``<table>_checks``: a keyed checker (funke keyed state, the general path) that emits an
  ``alert`` row on any sequence number seen twice, a ``seen`` row for every
  ``SEEN_EVERY``-th number, and at the end of input one ``total`` row per key (its count,
  and an ``alert`` when a number is missing).

A failure-free run writes exactly ``expected_counts(events)`` and ``KEYS`` totals of
``events / KEYS``, and no alert. Killing the job anywhere and starting it again must give
the same tables: nothing lost, nothing written twice.

The events come from funke's generator (``source="generator"``), from a Redis Stream that
``write_stream`` filled (``source="redis"``: the stream ends at its ``events``-th entry), from
JSON files that ``write_files`` wrote, one file per micro-batch (``source="files"``:
bounded, as Flink's FileSource, so it ends after the files present at the start), or from a
Kafka topic that ``write_topic`` filled (``source="kafka"``: ``events=N`` ends it).

The two outputs go to PostgreSQL tables (``sink="postgres"``) or to Kafka topics of the same
names through the transactional sink (``sink="kafka"``; read them ``read_committed``).

``FUNKE_CHAOS_KILL=during:<sink>:<batch>`` or ``after:<sink>:<batch>`` makes the sink SIGKILL
its own process group in the middle of the transaction of the first batch with rows from
``<batch>`` on (PostgreSQL: rows copied, before COMMIT; Kafka: records produced and flushed
to the broker, before ``commit_transaction``), or right after it commits (before Spark
records the batch as done).
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from dataclasses import dataclass
from typing import Any

import funke as fk
from funke.connectors.kafka_sink import KafkaSink
from funke.connectors.postgres import PostgresSink
from funke.functions import KeyedProcessFunction
from funke.state import MapStateDescriptor, ValueStateDescriptor
from funke.windows import TumblingEventTimeWindows

KEYS = 20
MS_PER_EVENT = 5
WINDOW_MS = 10_000
SEEN_EVERY = 25  # the checker reports every 25th sequence number: rows in most of its batches
END_TIMER_MS = 10**12  # far past every event: fires only when the end of input moves the watermark to +inf
KILL = "FUNKE_CHAOS_KILL"


SCHEMA = "key string, seq bigint, event_time bigint"
SOURCES = ("generator", "redis", "files", "kafka")
SINKS = ("postgres", "kafka")
#: Partitions of the Kafka input topic: event i goes to partition i % KAFKA_PARTITIONS (a key's events stay in order).
KAFKA_PARTITIONS = 2


def source(
    events: int,
    rows_per_batch: int,
    kind: str = "generator",
    *,
    redis: str = "",
    stream: str = "",
    files: str = "",
    bootstrap: str = "",
    topic: str = "",
) -> Any:
    if kind == "redis":
        return fk.sources.redis_stream(stream, schema=SCHEMA, url=redis, max_rows_per_batch=rows_per_batch, events=events)
    if kind == "files":
        return fk.sources.files(files, schema=SCHEMA, format="json", maxFilesPerTrigger=1)
    if kind == "kafka":
        return fk.sources.kafka(topic, schema=SCHEMA, bootstrap=bootstrap, events=events, max_rows_per_batch=rows_per_batch)
    if kind != "generator":
        raise ValueError(f"chaos source must be one of {', '.join(SOURCES)}, got {kind!r}")
    return fk.sources.generator(
        {"key": f"concat('k', cast(i % {KEYS} as string))", "seq": f"i div {KEYS}", "event_time": f"i * {MS_PER_EVENT}"},
        schema=SCHEMA,
        events=events,
        rows_per_batch=rows_per_batch,
    )


def event(i: int) -> dict[str, Any]:
    """Event ``i``, as the generator makes it."""
    return {"key": f"k{i % KEYS}", "seq": i // KEYS, "event_time": i * MS_PER_EVENT}


def write_stream(url: str, stream: str, events: int) -> None:
    """The events into a fresh Redis Stream, in order."""
    import redis

    client = redis.Redis.from_url(url)
    client.delete(stream)
    for start in range(0, events, 5_000):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(events, start + 5_000)):
            pipe.xadd(stream, event(i))
        pipe.execute()


def write_files(directory: str, events: int, rows_per_file: int) -> int:
    """The events as JSON-lines files, ``rows_per_file`` each, modified one second apart in
    event-time order (Spark's file source reads the oldest first). Returns how many files."""
    import json
    import time
    from pathlib import Path

    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    base = time.time() - events // rows_per_file - 10
    for n, start in enumerate(range(0, events, rows_per_file)):
        path = root / f"events-{n:05d}.json"
        path.write_text("".join(json.dumps(event(i)) + "\n" for i in range(start, min(events, start + rows_per_file))))
        os.utime(path, (base + n, base + n))
    return -(-events // rows_per_file)


def write_topic(bootstrap: str, topic: str, events: int, partitions: int = KAFKA_PARTITIONS) -> None:
    """The events into a new Kafka topic as JSON, event ``i`` to partition ``i % partitions`` (keyed by its key):
    a micro-batch takes as many offsets from each partition, so it holds consecutive events."""
    import json

    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its future is done
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
    failed: list[str] = []
    for i in range(events):
        e = event(i)
        while True:
            try:
                producer.produce(topic, json.dumps(e), e["key"], partition=i % partitions,
                                 on_delivery=lambda err, _: err is not None and failed.append(err.str()))  # fmt: skip
                break
            except BufferError:
                producer.poll(0.1)
    left = producer.flush(120)
    if left or failed:
        raise RuntimeError(
            f"writing the chaos events to topic {topic} at {bootstrap}: {left} not acknowledged, failed: {failed[:3]}"
        )


class SequenceChecker(KeyedProcessFunction):
    """Alerts on a repeated sequence number; at the end, the key's total and any gap.

    Elements of a key may arrive out of order within a micro-batch (several source
    partitions), so it keeps the highest contiguous number and the ones seen above it.
    """

    def open(self, ctx: Any) -> None:
        self.contiguous = ctx.get_state(ValueStateDescriptor("contiguous", int))  # highest n with 0..n all seen
        self.ahead = ctx.get_map_state(MapStateDescriptor("ahead"))  # numbers seen above it
        self.count = ctx.get_state(ValueStateDescriptor("count", int))

    def process_element(self, value: dict[str, Any], ctx: Any) -> Any:
        seq, top = value["seq"], self.contiguous.value()
        top = -1 if top is None else top
        if seq <= top or self.ahead.contains(seq):
            yield {"kind": "alert", "key": ctx.get_current_key(), "n": seq, "detail": "repeated"}
            return
        self.count.update((self.count.value() or 0) + 1)
        if seq % SEEN_EVERY == 0:
            yield {"kind": "seen", "key": ctx.get_current_key(), "n": seq, "detail": ""}
        self.ahead.put(seq, True)
        while self.ahead.contains(top + 1):
            self.ahead.remove(top + 1)
            top += 1
        self.contiguous.update(top)
        ctx.timer_service().register_event_time_timer(END_TIMER_MS)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key = ctx.get_current_key()
        yield {"kind": "total", "key": key, "n": self.count.value() or 0, "detail": ""}
        if not self.ahead.is_empty():
            yield {"kind": "alert", "key": key, "n": self.contiguous.value(), "detail": "gap after"}


@dataclass(eq=False)
class ChaosPostgresSink(PostgresSink):
    """The PostgreSQL sink, able to kill its own process in or right after a batch's transaction."""

    def write_table(self, data: Any, schema: Any, *, job: str, batch_id: int, query_id: str | None) -> bool:
        self._batch = batch_id
        written = super().write_table(data, schema, job=job, batch_id=batch_id, query_id=query_id)
        if data.num_rows and _kill_requested("after", self.name, batch_id):
            _die()
        return written

    def _copy(self, conn: Any, data: Any, schema: Any) -> None:
        super()._copy(conn, data, schema)
        if _kill_requested("during", self.name, getattr(self, "_batch", -1)):
            _die()


@dataclass(eq=False)
class ChaosKafkaSink(KafkaSink):
    """The transactional Kafka sink, able to kill its own process in or right after a batch's transaction."""

    def write_table(self, data: Any, *, job: str, batch_id: int, query_id: str | None) -> bool:
        self._batch = batch_id
        written = super().write_table(data, job=job, batch_id=batch_id, query_id=query_id)
        if data.num_rows and _kill_requested("after", self.name, batch_id):
            _die()
        return written

    def _produce(self, producer: Any, values: list[str], keys: list[str] | None) -> None:
        super()._produce(producer, values, keys)
        if _kill_requested("during", self.name, getattr(self, "_batch", -1)):
            producer.flush(30)  # the records are on the broker, in a transaction that never commits
            _die()


def _kill_requested(when: str, sink: str, batch: int) -> bool:
    """True for the first batch with rows at or after the one ``FUNKE_CHAOS_KILL`` names."""
    asked = os.environ.get(KILL, "").rsplit(":", 1)
    return len(asked) == 2 and asked[0] == f"{when}:{sink}" and batch >= int(asked[1])


def _die() -> None:
    """SIGKILL the whole process group: this Python, Spark's JVM and its Python workers."""
    os.killpg(os.getpgid(0), signal.SIGKILL)


def job(
    events: int = 30_000,
    dsn: str = "",
    table: str = "chaos",
    rows_per_batch: int = 2_000,
    checkpoint_dir: str | None = None,
    spark: Any = None,
    source_kind: str = "generator",
    redis: str = "redis://127.0.0.1:6379/0",
    stream: str = "",
    files: str = "",
    sink_kind: str = "postgres",
    bootstrap: str = "127.0.0.1:9092",
) -> fk.StreamEnvironment:
    """``source_kind="kafka"`` reads topic ``<table>_in``; ``sink_kind="kafka"`` writes topics ``<table>`` and
    ``<table>_checks`` (which must exist), else tables of those names in PostgreSQL at ``dsn``."""
    if sink_kind not in SINKS:
        raise ValueError(f"chaos sink must be one of {', '.join(SINKS)}, got {sink_kind!r}")
    env = fk.StreamEnvironment(app="chaos", spark=spark, checkpoint_dir=checkpoint_dir)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("event_time", unit="ms")
    events_in = source(
        events, rows_per_batch, source_kind, redis=redis, stream=stream or f"chaos:{table}", files=files,
        bootstrap=bootstrap, topic=f"{table}_in",
    )  # fmt: skip
    keyed = env.from_source(events_in, wm, uid="events").key_by("key")

    def sink(name: str) -> Any:
        if sink_kind == "kafka":
            return ChaosKafkaSink(name, bootstrap, key=("key",))
        return ChaosPostgresSink(name, dsn)

    counts = keyed.window(TumblingEventTimeWindows.of(fk.seconds(WINDOW_MS // 1000))).count()
    counts.sink_to(sink(table), uid="counts")
    checks = keyed.process(SequenceChecker(), output_schema="kind string, key string, n bigint, detail string")
    checks.sink_to(sink(f"{table}_checks"), uid="checks")
    return env


def expected_counts(events: int) -> Counter[tuple[str, int]]:
    """(key, window start in ms) -> count, for a failure-free run over ``events`` events."""
    out: Counter[tuple[str, int]] = Counter()
    for i in range(events):
        out[(f"k{i % KEYS}", (i * MS_PER_EVENT) // WINDOW_MS * WINDOW_MS)] += 1
    return out
