"""YSB as a Spark user writes it without funke: plain PySpark Structured Streaming.

The same events (the generator's own SQL expressions from ``examples/ysb.py``, over
Spark's ``rate-micro-batch`` source or ``spark.range``), then what the Spark guide
shows: ``withWatermark``, a filter, a broadcast join, ``groupBy(window(...)).count()``
in append mode, results written by Spark's Parquet file sink. No funke code runs in the query.

Spark has no end-of-input watermark, so the streaming job closes its last windows the
usual way: after the last event comes one flush event dated far in the future. It is a
``view`` of a real ad, so no filter Spark pushes below the watermark can drop it; it opens
a window no watermark ever passes, which is never emitted.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQueryListener

import examples.ysb as ysb
from funke.bench.measure import WATERMARK_DELAY_MS, Batch, LatencyRun, Run, arrival_latencies, parquet_windows
from funke.bench.reference import EVENTS_PER_SECOND, MAX_DISORDER_MS, WINDOW_MS
from funke.connectors.sources import GeneratorSource
from funke.errors import JobFailedError
from funke.plan.expr import Sql

SYSTEM = "plain PySpark"
#: 9999-12-31T00:00:00Z, the flush event's time.
FLUSH_MS = 253_402_214_400_000


def event_columns(source: GeneratorSource, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The generator's columns as ``CAST(<its SQL> AS <type>) AS name``, over the index ``i``."""
    out = []
    for name, e in source.columns:
        if name in skip:
            continue
        if not isinstance(e, Sql):
            raise TypeError(f"generator column '{name}' is {e!r}, not a SQL string the plain job can reuse")
        field = source.schema.get(name)
        out.append(f"CAST({e.text} AS {field.dtype if field else 'string'}) AS `{name}`")
    return out


def ysb_events(n: int | None) -> GeneratorSource:
    return ysb.events(n, events_per_second=EVENTS_PER_SECOND, max_disorder_ms=MAX_DISORDER_MS)


def window_counts_query(events: DataFrame, campaigns: DataFrame, *, streaming: bool) -> DataFrame:
    """Views → ad → campaign → count per campaign per 10-second tumbling event-time window."""
    if streaming:
        events = events.withWatermark("event_time", f"{WATERMARK_DELAY_MS} milliseconds")
    views = events.where(F.col("event_type") == "view").select("ad_id", "event_time")
    joined = views.join(F.broadcast(campaigns), "ad_id")
    counts = joined.groupBy(F.window("event_time", f"{WINDOW_MS // 1000} seconds"), "campaign_id").count()
    window = [F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end")]
    return counts.select("campaign_id", *window, "count")


def campaigns_frame(spark: SparkSession) -> DataFrame:
    table = ysb.campaigns()
    assert table.rows is not None
    return spark.createDataFrame(list(table.rows), "ad_id string, campaign_id string")


def bounded(spark: SparkSession, n: int, partitions: int, output: str) -> Run:
    """The same job as a batch job over ``spark.range(n)``, results written to Parquet in ``output``."""
    started = time.monotonic()
    index = spark.range(0, n, numPartitions=partitions).select(F.col("id").alias("i"))
    events = index.selectExpr(*event_columns(ysb_events(n))).withColumn("event_time", F.timestamp_millis("event_time"))
    window_counts_query(events, campaigns_frame(spark), streaming=False).write.parquet(output)
    wall = time.monotonic() - started
    return Run(SYSTEM, "bounded", n, wall, (Batch(0, round(wall * 1000), n),), parquet_windows(spark, output))


def streaming(spark: SparkSession, n: int, rows_per_batch: int, partitions: int, workdir: str, timeout_s: float) -> Run:
    """``n`` events through ``rate-micro-batch``, ``rows_per_batch`` per micro-batch, then the flush event.

    Results go to Spark's Parquet file sink under ``workdir``, like funke's, so no Python
    runs inside either streaming query.
    """
    index = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", partitions)
        .load()
        .select(F.col("value").alias("i"))
        .where(F.col("i") <= n)
    )
    flush = F.col("i") == n
    events = (
        index.selectExpr("i", *event_columns(ysb_events(n)))
        .withColumn("event_time", F.timestamp_millis(F.when(flush, F.lit(FLUSH_MS)).otherwise(F.col("event_time"))))
        .withColumn("event_type", F.when(flush, F.lit("view")).otherwise(F.col("event_type")))
        .drop("i")
    )
    counts = window_counts_query(events, campaigns_frame(spark), streaming=True)
    output, checkpoint = f"{workdir}/out", f"{workdir}/checkpoint"
    progress = _Progress(spark)
    started = time.monotonic()
    try:
        writer = counts.writeStream.outputMode("append").format("parquet").option("path", output)
        query = writer.option("checkpointLocation", checkpoint).start()

        def flushed() -> bool:
            return any((p.eventTime or {}).get("watermark", "").startswith("9999") for p in progress.of(query.id))

        _wait(query, flushed, timeout_s)
        wall = time.monotonic() - started
    finally:
        progress.close()
    reports = progress.of(query.id)
    batches = tuple(Batch(p.batchId, int((p.durationMs or {}).get("triggerExecution", 0)), _events_read(p, n)) for p in reports)
    dropped = sum(int(getattr(s, "numRowsDroppedByWatermark", 0) or 0) for p in reports for s in (p.stateOperators or []))
    return Run(SYSTEM, "streaming", sum(b.events for b in batches), wall, batches, parquet_windows(spark, output), dropped)


def latency(spark: SparkSession, rate: float, seconds: float, partitions: int, workdir: str) -> LatencyRun:
    """YSB over Spark's ``rate`` source for ``seconds``: event time is its ``timestamp``, the wall clock at generation."""
    source = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", int(rate))
        .option("numPartitions", partitions)
        .load()
        .select(F.col("value").alias("i"), F.col("timestamp").alias("event_time"))
    )
    events = source.selectExpr("event_time", *event_columns(ysb_events(None), skip=("event_time",)))
    counts = window_counts_query(events, campaigns_frame(spark), streaming=True)
    output = f"{workdir}/out"
    writer = counts.writeStream.outputMode("append").format("parquet").option("path", output)
    query = writer.option("checkpointLocation", f"{workdir}/checkpoint").start()
    _wait(query, lambda: False, seconds, timeout_ok=True)
    samples = arrival_latencies(spark, output)
    return LatencyRun(SYSTEM, seconds, rate, "Spark rate source (event time: its timestamp column)", samples)


def _events_read(p: Any, n: int) -> int:
    """Events (rows ``0 .. n-1``) a micro-batch read, from the rate-micro-batch offsets."""
    src = p.sources[0]
    start, end = _offset(src.startOffset), _offset(src.endOffset)
    return max(0, min(end, n) - min(start, n))


def _offset(text: str | None) -> int:
    """``{"offset": 3000, ...}`` → 3000; before the first batch Spark reports no offset."""
    try:
        value = json.loads(text) if text else None
    except ValueError:
        value = None
    return int(value["offset"]) if isinstance(value, dict) else 0


def _wait(query: Any, done: Callable[[], bool], timeout_s: float, *, timeout_ok: bool = False) -> None:
    deadline = time.monotonic() + timeout_s
    try:
        while not done():
            if not query.isActive:
                raise JobFailedError(f"the plain PySpark query stopped: {query.exception()}")
            if time.monotonic() >= deadline:
                if timeout_ok:
                    return
                raise JobFailedError(f"the plain PySpark query did not finish within {timeout_s:.0f} s")
            time.sleep(0.05)
    finally:
        query.stop()


class _Progress:
    """Every progress report, per query (``recentProgress`` keeps only the last 100)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self._lock = threading.Lock()
        self._seen: dict[str, list[Any]] = {}
        outer = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                pass

            def onQueryProgress(self, event: Any) -> None:
                with outer._lock:
                    outer._seen.setdefault(str(event.progress.id), []).append(event.progress)

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                pass

        self._listener = Listener()
        spark.streams.addListener(self._listener)

    def of(self, query_id: Any) -> list[Any]:
        with self._lock:
            return sorted(self._seen.get(str(query_id), []), key=lambda p: p.batchId)

    def close(self) -> None:
        self.spark.streams.removeListener(self._listener)
