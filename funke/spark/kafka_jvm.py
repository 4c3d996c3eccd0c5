"""Kafka through Spark's own connector (``spark-sql-kafka-0-10``): its source frames and its writer.

The source gives the raw records in the columns funke's Python data source gives
(``key, value, topic, partition, offset, timestamp``), so ``funke.spark.kafka_source.frame``
parses both alike (dead letters with topic, partition and offset included). A
``fk.sources.kafka`` description becomes the connector's options:

* ``starting``: ``startingOffsets`` (``earliest``, ``latest``, or every partition's offset as
  JSON: a partition not named starts at the earliest), or ``startingTimestamp`` for a
  ``datetime`` with ``startingOffsetsByTimestampStrategy=latest`` (a partition with no record
  at or after it starts at its end, as funke's reader does);
* ``max_rows_per_batch``: ``maxOffsetsPerTrigger``; ``isolation``: ``kafka.isolation.level``;
* a bounded run reads ``[start, end)`` per partition as planned on the driver
  (``funke.connectors.kafka.bounded_ranges``: the same records as funke's reader, ``events``
  included), as ``startingOffsets``/``endingOffsets``;
* ``on_broker_loss``: ``"fail"`` bounds the driver's offset requests and the executors' polls
  by ``broker_timeout``; ``"wait"`` lets both retry for as long as it takes.

The writer (``write_batch``, ``stream_writer``) writes funke's Kafka record format
(``funke.connectors.kafka_sink``: JSON or CSV values, keys joined with ``:``) with Spark
expressions, so no row goes through Python.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from funke.connectors import kafka as kc
from funke.connectors import kafka_offsets as ko
from funke.errors import EnvironmentSetupError, PlanError, SinkError
from funke.spark.record_text import csv_line, json_record, value_text

log = logging.getLogger("funke.kafka")

#: Spark's name for the connector's source and sink.
FORMAT = "kafka"
#: Milliseconds "for as long as it takes" (``on_broker_loss="wait"``): ten years.
FOREVER_MS = 10 * 365 * 24 * 3_600_000


def has_connector(spark: SparkSession) -> bool:
    """Whether ``spark`` can run ``format("kafka")`` (its jars were loaded when it started); asked once per session."""
    known = getattr(spark, "_funke_kafka_connector", None)
    if known is not None:
        return bool(known)
    try:
        spark.read.format(FORMAT).load()  # the connector refuses it for want of a topic; without it Spark finds no source
        found = True
    except Exception as e:  # noqa: BLE001  # the kind of error is the answer
        text = str(e)
        found = "DATA_SOURCE_NOT_FOUND" not in text and "Failed to find data source" not in text
    try:
        spark._funke_kafka_connector = found  # type: ignore[attr-defined]
    except AttributeError:  # Spark Connect sessions may refuse attributes
        pass
    return found


def reads_with_spark(spark: SparkSession, spec: kc.KafkaSource, *, streaming: bool) -> bool:
    """True when ``spec`` is read with Spark's connector in ``spark``; False for funke's Python data source.

    ``connector="spark"`` that cannot be honoured is an error, never a silent switch.
    """
    why = spec.python_only(streaming=streaming)
    if why is None and not has_connector(spark):
        why = f"this SparkSession has no Spark Kafka connector: {kc.SESSION_NOTE}"
    if why is None:
        return True
    if spec.connector == "spark":
        raise EnvironmentSetupError(f"{spec.describe()} with connector='spark': {why}")
    return False


# -- the source ---------------------------------------------------------------------------------


def _consumer_options(spec: kc.KafkaSource) -> dict[str, str]:
    timeout_ms = FOREVER_MS if spec.on_broker_loss == "wait" else max(1000, int(spec.broker_timeout_s * 1000))
    retries = 1_000_000_000 if spec.on_broker_loss == "wait" else 1
    return {
        "kafka.bootstrap.servers": spec.bootstrap,
        "kafka.isolation.level": spec.isolation,
        # the driver's offset requests (admin client) and the executors' fetches
        "kafka.default.api.timeout.ms": str(min(timeout_ms, 2**31 - 1)),
        "kafka.request.timeout.ms": str(min(timeout_ms, 30_000)),
        "fetchOffset.numRetries": str(retries),
        "fetchOffset.retryIntervalMs": "500",
        "kafkaConsumer.pollTimeoutMs": str(timeout_ms),
        "failOnDataLoss": "true",  # an offset gone (retention, a recreated topic) is an error, never a silent jump
    }


def _offsets_json(offsets: dict[str, int]) -> str:
    """``{"topic/partition": offset}`` as Spark's ``{"topic": {"partition": offset}}``."""
    out: dict[str, dict[str, int]] = {}
    for key, offset in offsets.items():
        topic, _, part = key.rpartition("/")
        out.setdefault(topic, {})[part] = offset
    return json.dumps(out)


def starting_options(spec: kc.KafkaSource) -> dict[str, str]:
    """Where a streaming read starts, as the connector's options."""
    import datetime as dt

    s = spec.starting
    if s in ("earliest", "latest"):
        return {"startingOffsets": s}
    if isinstance(s, dt.datetime):
        when = s if s.tzinfo is not None else s.replace(tzinfo=dt.UTC)
        return {"startingTimestamp": str(int(when.timestamp() * 1000)), "startingOffsetsByTimestampStrategy": "latest"}
    given = dict(s)
    with ko.Cluster(spec) as cluster:
        keys = cluster.partitions()
    missing = sorted(set(given) - set(keys))
    if missing:
        from funke.errors import SourceError

        raise SourceError(f"kafka(starting=...) names partition(s) {missing} that Kafka at {spec.bootstrap} does not have")
    return {"startingOffsets": _offsets_json({k: given.get(k, -2) for k in keys})}  # -2: Spark's "earliest"


def raw_frame(spark: SparkSession, spec: kc.KafkaSource, *, streaming: bool, cores: int, realtime: bool = False) -> DataFrame:
    """The records as the connector reads them (``key, value, topic, partition, offset, timestamp``);
    ``realtime``: for Spark's real-time trigger, which takes no batch size."""
    options = {**_consumer_options(spec), "subscribe": ",".join(spec.topics)}
    if streaming:
        options |= starting_options(spec) | ({} if realtime else {"maxOffsetsPerTrigger": str(spec.max_rows_per_batch)})
        reader = spark.readStream.format(FORMAT).options(**options)
    else:
        ranges = ko.bounded_ranges(spec, max(1, cores))
        start, end = _range_offsets(spec, ranges)
        reader = spark.read.format(FORMAT).options(**options, startingOffsets=_offsets_json(start), endingOffsets=_offsets_json(end))
    return reader.load().select("key", "value", "topic", "partition", "offset", "timestamp")


def _range_offsets(spec: kc.KafkaSource, ranges: list[tuple[Any, ...]]) -> tuple[dict[str, int], dict[str, int]]:
    """A bounded run's ``[start, end)`` per partition (every partition named: an empty one reads nothing)."""
    with ko.Cluster(spec) as cluster:
        keys = cluster.partitions()
        bounds = cluster.bounds(keys)
    start = {k: bounds[k][0] for k in keys}
    end = dict(start)
    lows: dict[str, int] = {}
    for r in ranges:
        if r[0] != "range":
            continue
        _, key, lo, hi = r
        lows[key] = min(lo, lows.get(key, lo))
        end[key] = max(hi, end.get(key, hi))
    for key in keys:
        start[key] = lows.get(key, end[key])
    return start, end


# -- the sink -----------------------------------------------------------------------------------

def _raw_value(df: DataFrame) -> Column:
    """The one STRING column as each record's value (Flink's raw format; a NULL is a record with no value)."""
    if len(df.schema.fields) != 1 or df.schema.fields[0].dataType.simpleString() != "string":
        raise SinkError(f"a kafka sink in the raw format writes one STRING column as each record's value, got columns {df.columns}")
    return F.col(f"`{df.columns[0]}`")


def records(df: DataFrame, sink: Any) -> DataFrame:
    """The rows as Kafka records (``key``, ``value``) in funke's format for ``sink`` (a ``KafkaSink``)."""
    for c in sink.key:
        if c not in df.columns:
            raise SinkError(f"kafka sink '{sink.name}': key column '{c}' is not in the results ({', '.join(df.columns)})")
    value = json_record(df) if sink.format == "json" else csv_line(df) if sink.format == "csv" else _raw_value(df)
    key = F.concat_ws(":", *(F.coalesce(value_text(df, k), F.lit("")) for k in sink.key)) if sink.key else F.lit(None).cast("string")
    return df.select(key.alias("key"), value.alias("value"))


def producer_options(sink: Any) -> dict[str, str]:
    """The connector's producer: idempotent (no duplicates from its own retries), every record acknowledged."""
    extra = {f"kafka.{k}": str(v) for k, v in sink.config.items()}
    # Kafka's producer refuses a delivery timeout below linger + request timeout: the requests get the
    # sink's timeout where it is shorter than Kafka's default 30 s, so a short one is honoured
    timeout_ms = max(1_000, int(sink.timeout * 1000))
    linger_ms, request_ms = 5, min(30_000, timeout_ms)
    return {
        "kafka.bootstrap.servers": sink.bootstrap,
        "topic": sink.topic,
        "kafka.enable.idempotence": "true",
        "kafka.acks": "all",
        "kafka.linger.ms": str(linger_ms),
        "kafka.request.timeout.ms": str(request_ms),
        "kafka.delivery.timeout.ms": str(max(timeout_ms, linger_ms + request_ms)),
        **extra,
    }


def writes_with_spark(spark: SparkSession, sink: Any) -> bool:
    """An at-least-once Kafka sink is written by Spark's connector where the session has it (no batch on the
    driver); the exactly-once one keeps funke's transactions (the connector's writer has none)."""
    return sink.delivery == "at-least-once" and sink.connector != "python" and has_connector(spark)


def batch_writer(spec: Any, job: str) -> Any:
    """``foreachBatch``'s function for a ``BatchSink``: Spark's Kafka writer for an at-least-once Kafka sink
    where the session has it (``writes_with_spark``), else the sink's own ``write_batch``."""
    from funke.connectors.kafka_sink import KafkaSink

    def write(df: DataFrame, batch_id: int) -> None:
        if isinstance(spec, KafkaSink) and writes_with_spark(df.sparkSession, spec):
            write_batch(df, spec)
        else:
            spec.write_batch(df, batch_id, job)

    return write


def write_batch(df: DataFrame, sink: Any) -> None:
    """One micro-batch (or a bounded run's rows) to the topic, flushed before Spark commits the batch."""
    records(df, sink).write.format(FORMAT).options(**producer_options(sink)).save()


def stream_writer(df: DataFrame, sink: Any) -> Any:
    """The streaming writer of ``df`` into the topic (real-time mode: at-least-once)."""
    if sink.delivery != "at-least-once":
        raise PlanError(
            f"kafka sink '{sink.name}': Spark's real-time Kafka sink is at-least-once (it has no transactions); "
            "give the sink delivery='at-least-once'"
        )
    return records(df, sink).writeStream.format(FORMAT).options(**producer_options(sink))
