"""YSB as a Spark user writes it without funke: plain PySpark Structured Streaming.

The same events (the generator's own SQL expressions from ``examples/ysb.py``, over
Spark's ``rate-micro-batch`` source or ``spark.range``), then what the Spark guide
shows: ``withWatermark``, a filter, a broadcast join, ``groupBy(window(...)).count()``
in append mode, results written by Spark's Parquet file sink. No funke code runs in the query.

Spark has no end-of-input watermark, so the streaming job closes its last windows the
usual way: after the last event comes one flush event dated far in the future. It is a
``view`` of a real ad, so no filter Spark pushes below the watermark can drop it; it opens
a window no watermark ever passes, which is never emitted.

``append_until_flushed`` ends any such append-mode stream the same way (``funke bench
general --sessions`` streams its plain ``session_window`` job with it).

Two settings change the writing, as a Spark user would change it:

* ``exactly_once=False``: a ``foreachBatch`` appending each batch's rows as plain Parquet
  (``<out>/batch_id=N/``, no ``_spark_metadata`` log: a replayed batch writes its files
  again) instead of the file sink; the caller puts the checkpoint on tmpfs.
* ``trigger=True`` (funke's data Artisans trigger has no plain counterpart: Spark cannot
  fire a window early and then once more at its end): the closest plain job, the same
  count in ``update`` mode on a 1-second processing-time trigger, each batch's updated
  windows written by ``foreachBatch`` (replacing the batch's directory, or appending when
  ``exactly_once=False``). A window's last update is its final count; there is no
  flush event, the job stops once every event is read.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from examples import ysb
from funke.bench.latency import WATERMARK_DELAY_MS, LatencyRun, arrivals, latency_run
from funke.bench.measure import Batch, Run
from funke.bench.progress import ProgressLog
from funke.bench.reference import EVENTS_PER_SECOND, MAX_DISORDER_MS, WINDOW_MS
from funke.bench.sinks import batch_path
from funke.bench.window_rows import batch_window_rows, parquet_windows, split_firings
from funke.connectors.sources import GeneratorSource
from funke.errors import JobFailedError
from funke.plan.expr import Sql

SYSTEM = "plain PySpark"
#: 9999-12-31T00:00:00Z, the flush event's time.
FLUSH_MS = 253_402_214_400_000
#: The trigger variant's processing-time trigger.
TRIGGER_INTERVAL = "1 second"


def event_sql(source: GeneratorSource, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """The generator's columns as ``CAST(<its SQL> AS <type>)`` by name, over the index ``i``."""
    out = {}
    for name, e in source.columns:
        if name in skip:
            continue
        if not isinstance(e, Sql):
            raise TypeError(f"generator column '{name}' is {e!r}, not a SQL string the plain job can reuse")
        field = source.schema.get(name)
        out[name] = f"CAST({e.text} AS {field.dtype if field else 'string'})"
    return out


def event_columns(source: GeneratorSource, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The generator's columns as ``CAST(<its SQL> AS <type>) AS name``, over the index ``i``."""
    return [f"{sql} AS `{name}`" for name, sql in event_sql(source, skip=skip).items()]


def ysb_events(n: int | None, campaigns: int = ysb.CAMPAIGNS) -> GeneratorSource:
    return ysb.events(n, events_per_second=EVENTS_PER_SECOND, max_disorder_ms=MAX_DISORDER_MS, campaigns=campaigns)


def window_counts_query(events: DataFrame, campaigns: DataFrame, *, streaming: bool) -> DataFrame:
    """Views → ad → campaign → count per campaign per 10-second tumbling event-time window."""
    if streaming:
        events = events.withWatermark("event_time", f"{WATERMARK_DELAY_MS} milliseconds")
    views = events.where(F.col("event_type") == "view").select("ad_id", "event_time")
    joined = views.join(F.broadcast(campaigns), "ad_id")
    counts = joined.groupBy(F.window("event_time", f"{WINDOW_MS // 1000} seconds"), "campaign_id").count()
    window = [F.col("window.start").alias("window_start"), F.col("window.end").alias("window_end")]
    return counts.select("campaign_id", *window, "count")


def campaigns_frame(spark: SparkSession, campaigns: int = ysb.CAMPAIGNS) -> DataFrame:
    """The ad → campaign table: the listed rows, or Spark generating them (``ysb.campaign_columns``) when large."""
    table = ysb.campaigns(campaigns)
    if table.rows is None:
        return spark.range(campaigns * ysb.ADS_PER_CAMPAIGN).selectExpr(*ysb.campaign_columns(campaigns))
    return spark.createDataFrame(list(table.rows), ysb.CAMPAIGN_SCHEMA)


def bounded(
    spark: SparkSession,
    n: int,
    partitions: int,
    output: str,
    *,
    campaigns: int = ysb.CAMPAIGNS,
    on_finished: Callable[[], None] = lambda: None,
) -> Run:
    """The same job as a batch job over ``spark.range(n)``, results written to Parquet in ``output``.

    ``on_finished`` runs when the job has ended, before its output is read.
    """
    started = time.monotonic()
    index = spark.range(0, n, numPartitions=partitions).select(F.col("id").alias("i"))
    columns = event_columns(ysb_events(n, campaigns))
    events = index.selectExpr(*columns).withColumn("event_time", F.timestamp_millis("event_time"))
    window_counts_query(events, campaigns_frame(spark, campaigns), streaming=False).write.parquet(output)
    wall = time.monotonic() - started
    on_finished()
    return Run(SYSTEM, "bounded", n, wall, (Batch(0, round(wall * 1000), n),), parquet_windows(spark, output))


def streaming(
    spark: SparkSession,
    n: int,
    rows_per_batch: int,
    partitions: int,
    workdir: str,
    timeout_s: float,
    *,
    checkpoint: str | None = None,
    campaigns: int = ysb.CAMPAIGNS,
    exactly_once: bool = True,
    trigger: bool = False,
    on_finished: Callable[[], None] = lambda: None,
) -> Run:
    """``n`` events through ``rate-micro-batch``, ``rows_per_batch`` per micro-batch (then the flush event in append mode).

    Results go to Parquet under ``workdir/out``: Spark's file sink, like funke's, so no
    Python runs inside either streaming query; a ``foreachBatch`` when ``exactly_once`` is
    off or ``trigger`` is on (see the module's docstring). ``on_finished`` runs when the
    query has stopped, before its output is read.
    """
    index = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", partitions)
        .load()
        .select(F.col("value").alias("i"))
        .where(F.col("i") < n if trigger else F.col("i") <= n)
    )
    events = index.selectExpr("i", *event_columns(ysb_events(n, campaigns)))
    if not trigger:
        flush = F.col("i") == n
        events = events.withColumn("event_time", F.when(flush, F.lit(FLUSH_MS)).otherwise(F.col("event_time")))
        events = events.withColumn("event_type", F.when(flush, F.lit("view")).otherwise(F.col("event_type")))
    events = events.withColumn("event_time", F.timestamp_millis("event_time")).drop("i")
    counts = window_counts_query(events, campaigns_frame(spark, campaigns), streaming=True)
    output, checkpoint = f"{workdir}/out", checkpoint or f"{workdir}/checkpoint"
    progress = ProgressLog(spark)
    started = time.monotonic()
    try:
        writer = counts.writeStream.option("checkpointLocation", checkpoint)
        if trigger:
            writer = writer.outputMode("update").trigger(processingTime=TRIGGER_INTERVAL)
        else:
            writer = writer.outputMode("append")
        if exactly_once and not trigger:
            writer = writer.format("parquet").option("path", output)
        else:
            writer = writer.foreachBatch(_batch_writer(output, "overwrite" if exactly_once else "append"))
        query = writer.start()

        def finished() -> bool:
            reports = progress.of(query.id)
            if trigger:
                return sum(_events_read(p, n) for p in reports) >= n
            return _flushed(reports)

        wait_for_query(query, finished, timeout_s)
        wall = time.monotonic() - started
    finally:
        progress.close()
    on_finished()
    run = _reported_run(progress.of(query.id), n, wall)
    if not trigger:
        return dataclasses.replace(run, windows=parquet_windows(spark, output))
    firings = split_firings(batch_window_rows(spark, output))  # update mode: a window's last row is its final count
    return dataclasses.replace(run, windows=firings.final, early_rows=firings.early_rows, problems=firings.problems)


def append_until_flushed(spark: SparkSession, frame: DataFrame, n: int, output: str, checkpoint: str, timeout_s: float) -> Run:
    """Stream ``frame`` (events ``0 .. n-1`` of a ``rate-micro-batch`` index, then the flush event ``n``) to
    Parquet at ``output`` in append mode until the flush event's watermark has emitted every window.

    The run's batches and dropped rows; its ``windows`` are left empty for the caller to read.
    """
    progress = ProgressLog(spark)
    started = time.monotonic()
    try:
        writer = frame.writeStream.outputMode("append").format("parquet").option("path", output)
        query = writer.option("checkpointLocation", checkpoint).start()
        wait_for_query(query, lambda: _flushed(progress.of(query.id)), timeout_s)
        wall = time.monotonic() - started
    finally:
        progress.close()
    return _reported_run(progress.of(query.id), n, wall)


def _flushed(reports: list[Any]) -> bool:
    """A micro-batch ran with the flush event's watermark: every window it closes is written."""
    return any((p.eventTime or {}).get("watermark", "").startswith("9999") for p in reports)


def _reported_run(reports: list[Any], n: int, wall: float) -> Run:
    """The run's micro-batches (events ``0 .. n-1`` read, the flush event not counted) from Spark's progress reports."""
    batches = tuple(Batch(p.batchId, int((p.durationMs or {}).get("triggerExecution", 0)), _events_read(p, n)) for p in reports)
    dropped = sum(int(getattr(s, "numRowsDroppedByWatermark", 0) or 0) for p in reports for s in (p.stateOperators or []))
    return Run(SYSTEM, "streaming", sum(b.events for b in batches), wall, batches, {}, dropped)


def _batch_writer(output: str, mode: str) -> Callable[[DataFrame, int], None]:
    """What a Spark user hands ``foreachBatch`` to write plain Parquet: each batch in its own directory."""

    def write(df: DataFrame, batch_id: int) -> None:
        df.write.mode(mode).parquet(batch_path(output, batch_id))

    return write


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
    progress = ProgressLog(spark)
    try:
        query = writer.option("checkpointLocation", f"{workdir}/checkpoint").start()
        wait_for_query(query, lambda: False, seconds, timeout_ok=True)
    finally:
        progress.close()
    source = "Spark rate source (event time: its timestamp column)"
    return latency_run(SYSTEM, seconds, rate, source, arrivals(spark, output), progress.of(query.id))


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


def wait_for_query(query: Any, done: Callable[[], bool], timeout_s: float, *, timeout_ok: bool = False) -> None:
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


def rate_events(spark: Any, events: int, rows_per_batch: int, columns: dict[str, str], bound_ms: int) -> Any:
    """Events ``0 .. events - 1`` as a PySpark user streams them: Spark's ``rate-micro-batch`` source,
    ``columns`` (SQL of the index ``i``) and a watermark ``bound_ms`` behind the column ``t``."""
    from pyspark.sql import functions as F

    return (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", max(1, spark.sparkContext.defaultParallelism))
        .load()
        .select(F.col("value").alias("i"))
        .where(F.col("i") < events)
        .selectExpr(*(f"{sql} AS {name}" for name, sql in columns.items()))
        .withWatermark("t", f"{bound_ms} milliseconds")
    )


def parquet_until_read(spark: Any, frame: Any, events: int, out: str, checkpoint: str, timeout_s: float) -> float:
    """Stream ``frame`` to Parquet at ``out`` until every source's offset is past ``events`` and that
    batch committed; the wall seconds from the query's start."""
    progress = ProgressLog(spark)
    started = time.monotonic()
    try:
        query = frame.writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint).start()

        def finished() -> bool:
            return any(all(_offset(s.endOffset) >= events for s in p.sources) for p in progress.of(query.id))

        wait_for_query(query, finished, timeout_s)
        return time.monotonic() - started
    finally:
        progress.close()
