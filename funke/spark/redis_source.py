"""``funke_redis_stream``: Redis Streams as a Spark Python data source (stream and batch readers).

The readers only adapt :mod:`funke.connectors.redis_streams` to Spark's API: offsets,
partitions and Arrow record batches come from there. A finite source read as a stream
(``events=N``) carries the ``__funke_eos`` column and one end row after every stream's
``N``-th entry, like funke's other finite sources, so ``JobHandle.wait()`` returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from funke.connectors import redis_streams as rs
from funke.spark.datasources import EOS, decode, encode
from funke.spark.parse import CORRUPT, POSITION, REASON

NAME = "funke_redis_stream"


class RedisStreamDataSource(DataSource):
    """Options: ``config`` (an encoded ReaderConfig) and, for a bounded run, ``ends`` (stream → last ID)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        config: rs.ReaderConfig = decode(self.options["config"])
        columns = [f"`{f.name}` {f.dtype}" for f in config.schema] + [f"`{c}` string" for c in config.dead_columns or ()]
        if config.eos_column:
            columns.append(f"`{config.eos_column}` boolean")
        return ", ".join(columns)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RedisStreamReader(decode(self.options["config"]))

    def reader(self, schema: Any) -> DataSourceReader:
        return RedisBatchReader(decode(self.options["config"]), decode(self.options["ends"]))


class RedisStreamReader(DataSourceStreamReader):
    """Offsets are entry IDs with stream positions; ``partitions(start, end)`` is exactly ``(start, end]``."""

    def __init__(self, config: rs.ReaderConfig):
        self.config = config

    def initialOffset(self) -> dict:
        return rs.initial_offset(self.config)

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.config.max_rows_per_batch)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_rows = None if isinstance(limit, ReadAllAvailable) else getattr(limit, "max_rows", self.config.max_rows_per_batch)
        return rs.latest_offset(self.config, start, max_rows)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(p) for p in rs.plan_partitions(self.config, start, end)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return rs.read_partition(self.config, partition.value)

    def commit(self, end: dict) -> None:
        if self.config.trim:
            rs.trim(self.config, end)


class RedisBatchReader(DataSourceReader):
    """The first ``events`` entries of each stream, up to the IDs found before the job started."""

    def __init__(self, config: rs.ReaderConfig, ends: dict[str, str]):
        self.config, self.ends = config, ends

    def partitions(self) -> list[InputPartition]:
        c = self.config
        ranges = [(key, lo, hi) for key in c.streams for lo, hi in rs.split_range("0-0", self.ends[key], c.parallelism)]
        return [InputPartition(("range", *r)) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:  # Spark's placeholder when there is nothing to read
            return iter(())
        return rs.read_partition(self.config, partition.value)


def register(spark: SparkSession) -> None:
    """Register ``funke_redis_stream`` with a session (idempotent)."""
    if getattr(spark, "_funke_redis_registered", False):
        return
    spark.dataSource.register(RedisStreamDataSource)
    try:
        spark._funke_redis_registered = True  # type: ignore[attr-defined]
    except AttributeError:  # Spark Connect sessions may refuse attributes
        pass


def frame(spark: SparkSession, spec: rs.RedisStreamSource, *, streaming: bool, cores: int) -> DataFrame:
    """The source as a DataFrame, after checking Redis answers (``SourceError`` before any query starts).

    Streaming: entries as they arrive (``__funke_eos`` added when ``events`` ends the
    streams). Batch: the first ``events`` entries of each stream, which must be there.
    """
    spec.check()
    register(spark)
    eos = EOS if streaming and spec.events is not None else None
    config = rs.ReaderConfig.of(spec, parallelism=max(1, cores), eos_column=eos, dead_columns=(CORRUPT, REASON, POSITION))
    if streaming:
        return spark.readStream.format(NAME).option("config", encode(config)).load()
    ends = rs.bounded_ends(config)
    return spark.read.format(NAME).option("config", encode(config)).option("ends", encode(ends)).load()
