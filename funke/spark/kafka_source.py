"""``funke_kafka``: Kafka topics as a Spark Python data source, and the parse of their values.

The readers only adapt :mod:`funke.connectors.kafka` to Spark's API; they hand Spark each
record's bytes and metadata (``key, value, topic, partition, offset, timestamp``, the
columns of Spark's own Kafka connector). Spark then parses the values on the JVM: JSON with
``from_json``, CSV with ``from_csv``, both in PERMISSIVE mode so that a record that does not
parse or fit the schema arrives whole in the corrupt-record column and goes to the dead
letters, with its topic, partition and offset as the position. An upsert topic (Flink's upsert-kafka) also
has its keys parsed, and its records without a value are deletes (``_upserts``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows

from funke.connectors import kafka as kc
from funke.connectors import kafka_offsets as ko
from funke.plan.changelog import DELETE, INSERT, ROW_KIND
from funke.plan.types import Schema
from funke.spark import cdc_json, kafka_jvm, parse
from funke.spark.datasources import EOS, decode, encode
from funke.spark.parse import CORRUPT, POSITION, REASON

NAME = "funke_kafka"


class KafkaDataSource(DataSource):
    """Options: ``config`` (an encoded ReaderConfig) and, for a bounded run, ``ranges``."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        config: kc.ReaderConfig = decode(self.options["config"])
        return kc.RAW_DDL + (f", `{config.eos_column}` boolean" if config.eos_column else "")

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return KafkaStreamReader(decode(self.options["config"]))

    def reader(self, schema: Any) -> DataSourceReader:
        return KafkaBatchReader(decode(self.options["config"]), decode(self.options["ranges"]))


class KafkaStreamReader(DataSourceStreamReader):
    """Offsets are per-partition next offsets; ``partitions(start, end)`` is exactly ``[start, end)``."""

    def __init__(self, config: kc.ReaderConfig):
        self.config = config
        self.initial: dict | None = None

    def initialOffset(self) -> dict:
        # Fixed once per query run: "latest" or a time must not move on while no batch has run.
        if self.initial is None:
            self.initial = ko.initial_offset(self.config.spec)
        return self.initial

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.config.spec.max_rows_per_batch)

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_rows = None if isinstance(limit, ReadAllAvailable) else getattr(limit, "max_rows", self.config.spec.max_rows_per_batch)
        return ko.latest_offset(self.config.spec, start, max_rows)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        return [InputPartition(p) for p in ko.plan_partitions(self.config.parallelism, self.config.eos_column, start, end)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return kc.read_partition(self.config, partition.value)


class KafkaBatchReader(DataSourceReader):
    """The offset ranges fixed on the driver before the job started."""

    def __init__(self, config: kc.ReaderConfig, ranges: list[tuple[Any, ...]]):
        self.config, self.ranges = config, ranges

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(r) for r in self.ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:  # Spark's placeholder when there is nothing to read
            return iter(())
        return kc.read_partition(self.config, partition.value)


def register(spark: SparkSession) -> None:
    """Register ``funke_kafka`` with a session (idempotent)."""
    if getattr(spark, "_funke_kafka_registered", False):
        return
    spark.dataSource.register(KafkaDataSource)
    try:
        spark._funke_kafka_registered = True  # type: ignore[attr-defined]
    except AttributeError:  # Spark Connect sessions may refuse attributes
        pass


def raw_frame(spark: SparkSession, spec: kc.KafkaSource, *, streaming: bool, cores: int, realtime: bool = False) -> DataFrame:
    """The records as Spark's Kafka connector gives them (``key, value, topic, partition, offset,
    timestamp``), after checking the broker and topics (``SourceError`` before any query starts):
    read by that connector where it serves (``kafka_jvm.reads_with_spark``), else by funke's reader."""
    kc.check(spec)
    if kafka_jvm.reads_with_spark(spark, spec, streaming=streaming):
        return kafka_jvm.raw_frame(spark, spec, streaming=streaming, cores=cores, realtime=realtime)
    register(spark)
    eos = EOS if streaming and spec.bounded else None
    config = kc.ReaderConfig(spec, max(1, cores), eos)
    if streaming:
        return spark.readStream.format(NAME).option("config", encode(config)).load()
    ranges = ko.bounded_ranges(spec, max(1, cores))
    return spark.read.format(NAME).option("config", encode(config)).option("ranges", encode(ranges)).load()


#: The column that names each row's partition (``topic/partition``) where the watermark is per partition.
SPLIT = "_funke_split"


def partition_keys(spec: kc.KafkaSource) -> list[str]:
    """The topics' partitions now, as ``topic/partition`` (``SourceError`` if the broker or a topic is missing)."""
    with ko.Cluster(spec) as cluster:
        return cluster.partitions()


def frame(
    spark: SparkSession, spec: kc.KafkaSource, *, streaming: bool, cores: int, split: bool = False, realtime: bool = False
) -> DataFrame:
    """The source's rows: the values parsed to the declared schema, the metadata columns asked
    for, and the dead-letter columns (raw record, reason, position); the end flag when finite;
    with ``split``, each row's partition as ``topic/partition`` in ``SPLIT``. ``realtime``: for Spark's
    real-time trigger (Spark's connector only, which reads each partition as records come: no batch size)."""
    raw = raw_frame(spark, spec, streaming=streaming, cores=cores, realtime=realtime)
    finite = EOS in raw.columns
    meta = [F.col(m).alias(f"kafka_{m}") for m in spec.metadata]
    position = F.concat(F.col("topic"), F.lit("/"), F.col("partition").cast("string"), F.lit("@"), F.col("offset").cast("string"))
    no_value = F.col("value").isNull()
    if finite:
        no_value = no_value & ~F.col(EOS)
    missing = parse.missing_field_reason(spec.fail_on_missing_field)
    malformed = F.lit(f"{spec.describe()}: malformed {spec.format} or a value that does not fit the schema{missing}")
    if spec.format == "raw":  # (the record's key and value; or its value as the one column, NULL for no value, as Flink's raw)
        value = [F.col("value").cast(f.dtype or "binary").alias(f.name) for f in spec.declared]
        parsed = value or [F.col("key"), F.col("value")]
        corrupt = F.lit(None).cast("string")
        no_value = no_value if not value else F.lit(False)
    elif spec.upsert_key:
        raw, parsed, corrupt, malformed = _upserts(raw, spec, no_value, malformed)
        no_value = F.lit(False)  # (a delete, not a dead letter)
    elif spec.envelope:
        read = cdc_json.debezium if spec.envelope.startswith("debezium") else cdc_json.canal
        raw, parsed, corrupt, malformed = read(raw, spec, no_value, malformed)
        no_value = F.lit(False)  # (a tombstone is skipped, as Flink's CDC formats skip it)
    else:
        text = F.col("value").cast("string")
        raw = parse.with_parsed(raw, text, spec.format, spec.declared, ignore_errors=spec.ignore_parse_errors, fail_on_missing=spec.fail_on_missing_field,
                                timestamp_format=spec.timestamp_format, instants=spec.instants)
        parsed = parse.parsed_columns(spec.declared)
        corrupt = parse.corrupt_text(spec.format, text, ~no_value)
    reason = F.when(no_value, F.lit(f"{spec.describe()}: record with no value (a tombstone)")).when(corrupt.isNotNull(), malformed)
    dead = [
        F.when(no_value, F.lit("")).otherwise(corrupt).alias(CORRUPT),
        reason.alias(REASON),
        position.alias(POSITION),
    ]
    ends = [F.col(EOS)] if finite else []
    splits = [F.concat(F.col("topic"), F.lit("/"), F.col("partition").cast("string")).alias(SPLIT)] if split else []
    return raw.select(*parsed, *meta, *dead, *ends, *splits)


#: The columns an upsert record's key is parsed into, before the row is made.
_KEY, _KEY_CORRUPT = "_funke_key_", "_funke_key_corrupt"


def _upserts(raw: DataFrame, spec: kc.KafkaSource, no_value: Column, malformed: Column) -> tuple[DataFrame, list[Column], Column, Column]:
    """Flink's upsert-kafka record: the key's columns from the record's key (a JSON object of them), the others from its
    value, the value's winning where it has the key's too (``value.fields-include`` ALL), as in Flink's reader; a
    record with no value deletes its key (``-D``, the key's columns only), any other is ``+I``. A record with no key,
    or a key or value that does not parse, is a dead letter. The frame, the row's columns, the corrupt text, the reason."""
    key = Schema(tuple(f for f in spec.declared if f.name in spec.upsert_key))
    key_text, text = F.col("key").cast("string"), F.col("value").cast("string")
    raw = parse.with_parsed(raw, key_text, "json", key)
    key_corrupt = F.when(key_text.isNull(), F.lit("")).otherwise(parse.corrupt_text("json", key_text, F.lit(True)))
    raw = raw.select("*", *(F.col(f"{parse.PARSED}.`{f.name}`").alias(f"{_KEY}{f.name}") for f in key), key_corrupt.alias(_KEY_CORRUPT))
    value = Schema(tuple(f for f in spec.declared if not (spec.value_except_key and f.name in spec.upsert_key)))
    raw = parse.with_parsed(raw.drop(parse.PARSED), text, spec.format, value, ignore_errors=spec.ignore_parse_errors,
                            timestamp_format=spec.timestamp_format, instants=tuple(c for c in spec.instants if value.get(c) is not None))
    read: dict[str, Column] = {}
    for f in spec.declared:
        read[f.name] = F.col(f"{parse.PARSED}.`{f.name}`")
        if f.name in spec.upsert_key:
            from_key = F.col(f"`{_KEY}{f.name}`")
            read[f.name] = from_key if f.name not in value else F.when(no_value, from_key).otherwise(read[f.name])
    kind = F.when(no_value, F.lit(DELETE)).otherwise(F.lit(INSERT)).alias(ROW_KIND)
    null_key = functools.reduce(lambda a, b: a | b, (read[k].isNull() for k in spec.upsert_key))
    value_corrupt = parse.corrupt_text(spec.format, text, ~no_value)
    corrupt = F.coalesce(F.col(_KEY_CORRUPT), value_corrupt, F.when(null_key, F.coalesce(text, key_text)))
    where = f"{spec.describe()}: "
    reason = (F.when(key_text.isNull(), F.lit(where + "record with no key (upsert-kafka reads the primary key from it)"))
              .when(F.col(_KEY_CORRUPT).isNotNull(), F.lit(where + "malformed json key or one that does not fit the primary key"))
              .when(value_corrupt.isNotNull(), malformed)
              .when(null_key, F.lit(where + f"a NULL in the primary key ({', '.join(spec.upsert_key)}), which is NOT NULL (Flink fails the job)")))  # fmt: skip
    return raw, [kind, *(c.alias(name) for name, c in read.items())], corrupt, reason
