"""Compiling source descriptions to Spark DataFrames, streaming or batch.

A finite source read as a stream carries a boolean column ``__funke_eos`` that is true on
one extra row after the last event. The watermark step turns that row's event time into
+infinity (Flink's MAX_WATERMARK for a finished source), then drops it, so every open
window fires at the end of input.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.connectors.kafka import KafkaSource
from funke.connectors.redis_streams import RedisStreamSource
from funke.connectors.sources import GENERATOR_INDEX, CollectionSource, FileSource, GeneratorSource
from funke.errors import UnsupportedError
from funke.plan.types import Field, Schema
from funke.spark import datasources, file_source, kafka_source, redis_source
from funke.spark.datasources import EOS
from funke.spark.parse import CORRUPT, POSITION, REASON  # noqa: F401  (the dead-letter columns a source frame may carry)
from funke.spark.exprs import to_column

#: The most rows an adaptive micro-batch of the generator holds.
ADAPTIVE_MAX_ROWS = 64_000_000

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _micros(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        d = v - _EPOCH
        return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
    return v


def _days(v: Any) -> Any:
    return (v - _EPOCH_DATE).days if isinstance(v, dt.date) else v


def wire_schema(schema: Schema) -> tuple[str, list[Any]]:
    """Timestamps/dates travel as numbers (naive datetimes are UTC) and are rebuilt in Spark."""
    parts, rebuild = [], []
    for f in schema:
        if f.dtype in ("timestamp", "timestamp_ntz"):
            parts.append(f"`{f.name}` bigint")
            rebuild.append(F.timestamp_micros(F.col(f.name)).alias(f.name))
        elif f.dtype == "date":
            parts.append(f"`{f.name}` int")
            rebuild.append(F.date_from_unix_date(F.col(f.name)).alias(f.name))
        else:
            parts.append(f"`{f.name}` {f.dtype or 'string'}")
            rebuild.append(F.col(f.name))
    return ", ".join(parts), rebuild


def wire_rows(rows: tuple[tuple[Any, ...], ...], schema: Schema) -> list[tuple[Any, ...]]:
    conv = [(_micros if f.dtype in ("timestamp", "timestamp_ntz") else _days if f.dtype == "date" else None) for f in schema]
    return [tuple(c(v) if c else v for c, v in zip(conv, r)) for r in rows]


def static_frame(spark: SparkSession, rows: tuple[tuple[Any, ...], ...], schema: Schema) -> DataFrame:
    """Rows from Python as a local relation (through pandas and Arrow).

    A local relation lives in the plan: a stream-static join broadcasts it every micro-batch
    without a Spark job. ``createDataFrame`` of a list would make a Python RDD instead, and
    every broadcast of it would start Python workers to unpickle the rows again (~0.2 s and
    a core per micro-batch here).
    """
    import pandas as pd

    ddl, rebuild = wire_schema(schema)
    struct = spark.createDataFrame([], ddl).schema
    wired = wire_rows(rows, schema)
    # integers as nullable integer arrays: with a None among them pandas would make float64, and round above 2**53
    nullable = {"long": "Int64", "integer": "Int32", "short": "Int16", "byte": "Int8"}
    columns = {
        f.name: pd.array([r[i] for r in wired], dtype=nullable.get(f.dataType.typeName(), object)) for i, f in enumerate(struct.fields)
    }
    frame = pd.DataFrame(columns, index=range(len(wired)))
    return spark.createDataFrame(frame, schema=struct).select(*rebuild)


def source_frame(spark: SparkSession, spec: Any, *, streaming: bool, cores: int) -> DataFrame:
    if isinstance(spec, GeneratorSource):
        return _generator(spark, spec, streaming, cores)
    if isinstance(spec, CollectionSource):
        return _collection(spark, spec, streaming)
    if isinstance(spec, FileSource):
        # A malformed record or a value of the wrong type arrives whole in CORRUPT (for the dead letters).
        if streaming and spec.bounded:
            return _bounded_files(spark, spec)
        return file_source.load(spark, spec, spec.path, streaming=streaming)
    if isinstance(spec, RedisStreamSource):
        return redis_source.frame(spark, spec, streaming=streaming, cores=cores)
    if isinstance(spec, KafkaSource):
        return kafka_source.frame(spark, spec, streaming=streaming, cores=cores)
    raise UnsupportedError(f"no Spark rule for source {spec.describe()}")


def _bounded_files(spark: SparkSession, spec: FileSource) -> DataFrame:
    """A bounded file source in a streaming run: the files present now, read by Spark's file
    stream source, then the end-of-input row.

    The listing is fixed here: Spark reads a glob naming exactly these files, so one landing
    later is not read. Spark takes them oldest first, ``maxFilesPerTrigger`` a micro-batch (all
    at once without it); a one-row-a-batch companion source sends the end-of-input row with
    the last of those micro-batches (both advance one step per micro-batch).
    """
    import math
    import os

    names = sorted(
        (e for e in os.scandir(spec.path) if e.is_file() and not e.name.startswith(("_", "."))),
        key=lambda e: (e.stat().st_mtime, e.name),
    ) if os.path.isdir(spec.path) else []
    per = int(dict(spec.options).get("maxFilesPerTrigger") or 0) or max(1, len(names))
    batches: list[list[tuple[Any, ...]]] = [[] for _ in range(max(1, math.ceil(len(names) / per)))]
    batches[-1].append((*([None] * len(spec.declared)), True))
    end = _collection_stream(spark, batches, spec.declared)
    if not names:
        return end
    glob = os.path.join(spec.path, "{" + ",".join(_glob_escape(e.name) for e in names) + "}")
    files = file_source.load(spark, spec, glob, streaming=True)
    return files.withColumn(EOS, F.lit(False)).unionByName(end, allowMissingColumns=True)


def _glob_escape(name: str) -> str:
    return "".join("\\" + c if c in "\\{}[]*?,^" else c for c in name)


def _generator(spark: SparkSession, spec: GeneratorSource, streaming: bool, cores: int) -> DataFrame:
    frame, _ = generator_split(spark, spec, streaming=streaming, cores=cores, early=spec.schema.names)
    return frame


def generator_split(
    spark: SparkSession, spec: GeneratorSource, *, streaming: bool, cores: int, early: tuple[str, ...] | list[str]
) -> tuple[DataFrame, list[Column]]:
    """The generator as its index, the ``early`` columns (and the end flag), plus the select
    that computes the other columns later from the index, in the declared order.

    Every column is a pure function of the index, so computing a column after a barrier (an
    ``observe``) gives the same rows; Spark then pushes a filter below that computation
    and builds the column only for the rows that pass.
    """
    if not streaming:
        if spec.events is None:
            raise UnsupportedError(f"{spec.describe()} never ends, so it cannot run bounded: give it events=N")
        index = spark.range(0, spec.events, numPartitions=max(1, cores)).select(F.col("id").alias(GENERATOR_INDEX))
    elif spec.rows_per_second is None and spec.batch_seconds is None:
        index = (
            spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", spec.rows_per_batch)
            .option("numPartitions", max(1, cores))
            .load()
            .select(F.col("value").alias(GENERATOR_INDEX))
        )
        if spec.events:  # finite
            # the source gives exactly rowsPerBatch rows a batch: the end-of-input marker (index `events`)
            # rides in the batch of the last event, not in one of its own (a finite job ends a batch sooner)
            i = F.col(GENERATOR_INDEX)
            last = F.when(i == spec.events - 1, F.array(i, F.lit(spec.events).cast("long"))).otherwise(F.array(i))
            index = index.where(i < spec.events).select(F.explode(last).alias(GENERATOR_INDEX))
    else:
        datasources.register(spark)
        ticks = (
            spark.readStream.format("funke_ticks")
            .option("rate", spec.rows_per_second or 0)
            .option("events", spec.events)
            .option("max_per_batch", spec.rows_per_batch if spec.batch_seconds is None else ADAPTIVE_MAX_ROWS)
            .option("target_s", spec.batch_seconds or 0)
            .option("first", spec.rows_per_batch)
            .option("parallelism", max(1, cores))
            .load()
        )
        if cores > 1:  # the driver read the ranges into one partition: spread them before they become rows
            ticks = ticks.repartition(cores)
        index = ticks.select(F.explode(F.sequence("lo", F.col("hi") - 1)).alias(GENERATOR_INDEX))
    cols = {}
    for name, e in spec.columns:
        c = to_column(e)
        f = spec.schema.get(name)
        if f is not None and f.dtype is not None:
            c = c.cast(f.dtype)
        cols[name] = c.alias(name)
    ends: list[Column] = []
    if streaming and spec.events is not None:
        index = index.where(F.col(GENERATOR_INDEX) <= spec.events)
        ends.append((F.col(GENERATOR_INDEX) == spec.events).alias(EOS))
    narrow = [c for name, c in cols.items() if name in early]
    keep = [F.col(GENERATOR_INDEX)] if len(narrow) < len(cols) else []
    later = [F.col(name) if name in early else c for name, c in cols.items()]
    return index.select(*keep, *narrow, *ends), later


#: Columns of a TestStream's rows besides the user's: row kind (0 element, 1 time), scripted
#: watermark and processing time, element order within the step.
SCRIPT_KIND, SCRIPT_WM, SCRIPT_PT, SCRIPT_SEQ = "fk_kind", "fk_wm", "fk_pt", "fk_seq"


def test_stream_frames(spark: SparkSession, spec: Any, streaming: bool) -> tuple[DataFrame, DataFrame | None]:
    """A TestStream as (elements, time rows): one micro-batch per script step, then the end of input."""
    from funke.semantics.time import MAX_WATERMARK

    schema = spec.schema
    if not streaming:
        rows = tuple((*r, _from_ms(t)) for st in spec.steps for r, t in zip(st.rows, st.timestamps, strict=True))
        return static_frame(spark, rows, schema), None
    width = len(schema)
    wire = Schema(schema.fields + tuple(Field(c, t) for c, t in ((SCRIPT_KIND, "int"), (SCRIPT_WM, "bigint"), (SCRIPT_PT, "bigint"), (SCRIPT_SEQ, "bigint"))))
    batches = []
    for st in spec.steps:
        rows = [(*r, _from_ms(t), 0, None, None, j) for j, (r, t) in enumerate(zip(st.rows, st.timestamps, strict=True))]
        rows.append((*([None] * width), 1, st.watermark, st.processing_time, None))
        batches.append(rows)
    end_pt = spec.steps[-1].processing_time if spec.steps else 0
    batches.append([(*([None] * width), 1, MAX_WATERMARK, end_pt, None)])
    wired = [[(*w, eos) for w, eos in zip(wire_rows(tuple(b), wire), [False] * len(b), strict=True)] for b in batches]
    wired[-1].append((*([None] * len(wire)), True))
    raw = _collection_stream(spark, wired, wire)
    is_time = (F.col(SCRIPT_KIND) == 1) & ~F.col(EOS)
    elements = raw.where(~is_time).select(*schema.names, F.col(EOS))  # one partition: rows keep script order
    control = raw.where(is_time).select(F.col(SCRIPT_WM), F.col(SCRIPT_PT))
    return elements, control


def _from_ms(ms: int) -> Any:
    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


def _collection(spark: SparkSession, spec: CollectionSource, streaming: bool) -> DataFrame:
    if not streaming:
        return static_frame(spark, spec.rows, spec.declared)
    rows = wire_rows(spec.rows, spec.declared)
    size = spec.rows_per_batch or max(1, len(rows))
    batches = [[(*r, False) for r in rows[i : i + size]] for i in range(0, len(rows), size)] or [[]]
    batches[-1].append((*([None] * len(spec.declared)), True))
    return _collection_stream(spark, batches, spec.declared)


def _collection_stream(spark: SparkSession, batches: list[list[tuple[Any, ...]]], schema: Schema) -> DataFrame:
    """A stream of wired rows (``schema``'s columns, then the end flag), one list per micro-batch."""
    datasources.register(spark)
    ddl, rebuild = wire_schema(schema)
    df = (
        spark.readStream.format("funke_collection")
        .option("schema", f"{ddl}, `{EOS}` boolean")
        .option("batches", datasources.encode(batches))
        .load()
    )
    return df.select(*rebuild, F.col(EOS))
