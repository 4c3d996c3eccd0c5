"""YSB from Kafka in plain PySpark, as a PySpark 4.3 user writes it without funke.

With Spark's own Kafka connector on the classpath (``spark-sql-kafka-0-10``: Maven Central serves
4.2.0, which runs on pyspark 4.3.0, not 4.3.0 itself), the user reads ``format("kafka")``. Without
it, what a user writes instead is the minimal Python data source below over confluent-kafka,
following PySpark's data source guide: offsets are ``{partition: next offset}``, the read limit
(``maxOffsetsPerTrigger``, as Spark's connector calls it) is shared evenly by the partitions, one
Spark task reads one Kafka partition's range and yields a tuple per record (the value as text).
The job parses the JSON values with ``from_json`` and runs the same YSB query as
``funke.bench.plain`` (filter views, broadcast join, 10 s window count in append mode), written by
Spark's Parquet file sink.

Spark has no end-of-input watermark, so the run ends as ``funke.bench.plain``'s does: the
topic holds, after the events, one flush record dated 9999 (a ``view`` of a real ad, the
last record of the last partition, which funke's ``events=N`` never reaches); once the
watermark reaches it, every window is written.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from examples import ysb
from funke.bench import plain
from funke.bench.measure import Batch, Run
from funke.bench.progress import ProgressLog
from funke.bench.window_rows import parquet_windows

SYSTEM = plain.SYSTEM
NAME = "plain_kafka"
#: The flush record's event time: in 9999, a day before funke's end-of-input instant (an event time funke takes,
#: so that funke reading the topic unbounded with Spark's connector sees the watermark pass every window too).
FLUSH_MS = plain.FLUSH_MS - 86_400_000
#: The columns of ``examples.ysb.events``, the JSON fields of each record.
EVENT_DDL = (
    "user_id string, page_id string, ad_id string, ad_type string, event_type string, event_time bigint, ip_address string"
)


class PlainKafkaSource(DataSource):
    """``spark.readStream.format("plain_kafka").option("bootstrap", ...).option("topic", ...)``."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return "value string"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return PlainKafkaStreamReader(self.options)


class PlainKafkaStreamReader(DataSourceStreamReader):
    def __init__(self, options: Any):
        self.bootstrap = options["bootstrap"]
        self.topic = options["topic"]
        self.max_offsets = int(options.get("maxOffsetsPerTrigger", 0)) or None

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer({"bootstrap.servers": self.bootstrap, "group.id": "plain-pyspark", "enable.auto.commit": False})

    def _ends(self, low: bool) -> dict:
        from confluent_kafka import TopicPartition

        c = self._consumer()
        try:
            parts = c.list_topics(self.topic, timeout=10).topics[self.topic].partitions
            return {str(p): c.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10)[0 if low else 1] for p in parts}
        finally:
            c.close()

    def initialOffset(self) -> dict:
        return self._ends(low=True)

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_offsets) if self.max_offsets else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        latest = self._ends(low=False)
        if isinstance(limit, ReadAllAvailable):
            return latest
        share = -(-limit.max_rows // len(latest))
        return {p: min(end, start.get(p, 0) + share) for p, end in latest.items()}

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition((int(p), start.get(p, 0), hi)) for p, hi in end.items() if hi > start.get(p, 0)]

    def read(self, partition: InputPartition) -> Iterator[tuple]:
        from confluent_kafka import TopicPartition

        p, lo, hi = partition.value
        c = self._consumer()
        try:
            c.assign([TopicPartition(self.topic, p, lo)])
            at = lo
            while at < hi:
                for m in c.consume(10_000, timeout=1.0):
                    if m.error() is not None or m.offset() >= hi:
                        continue
                    at = m.offset() + 1
                    yield (m.value().decode(),)
        finally:
            c.close()


def register(spark: SparkSession) -> None:
    spark.dataSource.register(PlainKafkaSource)


def streaming(
    spark: SparkSession,
    bootstrap: str,
    topic: str,
    n: int,
    rows_per_batch: int,
    workdir: str,
    timeout_s: float,
    *,
    checkpoint: str | None = None,
    on_finished: Callable[[], None] = lambda: None,
    connector: bool = False,
) -> Run:
    """YSB over the ``n`` events of ``topic`` (then its flush record), ``rows_per_batch`` per micro-batch, to Parquet.

    ``connector``: read with Spark's own Kafka connector (``format("kafka")``, as a PySpark user with
    ``spark-sql-kafka-0-10`` on the classpath writes it), else with the Python data source above.
    """
    if connector:
        records = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", rows_per_batch)
            .load()
            .select(F.col("value").cast("string").alias("value"))
        )
    else:
        register(spark)
        records = (
            spark.readStream.format(NAME)
            .option("bootstrap", bootstrap)
            .option("topic", topic)
            .option("maxOffsetsPerTrigger", rows_per_batch)
            .load()
        )
    events = records.select(F.from_json("value", EVENT_DDL).alias("e")).select("e.*")
    events = events.withColumn("event_time", F.timestamp_millis("event_time"))
    counts = plain.window_counts_query(events, plain.campaigns_frame(spark), streaming=True)
    output, checkpoint = f"{workdir}/out", checkpoint or f"{workdir}/checkpoint"
    progress = ProgressLog(spark)
    started = time.monotonic()
    try:
        query = (
            counts.writeStream.option("checkpointLocation", checkpoint)
            .outputMode("append")
            .format("parquet")
            .option("path", output)
            .start()
        )

        def finished() -> bool:
            return any((p.eventTime or {}).get("watermark", "").startswith("9999") for p in progress.of(query.id))

        plain.wait_for_query(query, finished, timeout_s)
        wall = time.monotonic() - started
    finally:
        progress.close()
    on_finished()
    reports = progress.of(query.id)
    batches = without_flush(
        tuple(Batch(p.batchId, int((p.durationMs or {}).get("triggerExecution", 0)), int(p.numInputRows)) for p in reports), n
    )
    dropped = sum(int(getattr(s, "numRowsDroppedByWatermark", 0) or 0) for p in reports for s in (p.stateOperators or []))
    run = Run(SYSTEM, "streaming", sum(b.events for b in batches), wall, batches, {}, dropped)
    return dataclasses.replace(run, windows=parquet_windows(spark, output))


def without_flush(batches: tuple[Batch, ...], n: int) -> tuple[Batch, ...]:
    """The micro-batches' events, the flush record (not an event) taken out of the last batch that read it."""
    if sum(b.events for b in batches) != n + 1:
        return batches
    last = next(i for i in range(len(batches) - 1, -1, -1) if batches[i].events)
    return (*batches[:last], dataclasses.replace(batches[last], events=batches[last].events - 1), *batches[last + 1 :])


def flush_record() -> bytes:
    """The record after the events that moves plain PySpark's watermark past every window (see the module doc)."""
    import json

    ad = ysb.campaign_rows()[0][0]
    fields = {"user_id": "user-0", "page_id": "page-0", "ad_id": ad, "ad_type": ysb.AD_TYPES[0], "event_type": "view",
              "event_time": FLUSH_MS, "ip_address": "0.0.0.0"}  # fmt: skip
    return json.dumps(fields, separators=(",", ":")).encode()
