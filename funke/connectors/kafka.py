"""Kafka topics as a replayable source: the description, its offsets, and reading records as Arrow.

Two readers hand Spark the same raw records (key, value, topic, partition, offset,
timestamp), whose values Spark then parses on the JVM (``from_json``/``from_csv``):

* Spark's own Kafka connector (``spark-sql-kafka-0-10``, ``funke.connectors.kafka_jvm``):
  funke's reader wherever it serves; the only one Spark's real-time trigger takes;
* funke's Python data source over confluent-kafka (librdkafka, this module's ``read_partition``),
  which moves records as bytes in Arrow batches: where the connector cannot be had
  (``FUNKE_KAFKA_CONNECTOR=python``, no ``mvn`` or Maven Central, a SparkSession of your own
  without it), or for what only it does (``ONLY_PYTHON``: a streaming run that ends after
  ``events=N``, librdkafka ``**options``). ``connector=`` picks one; ``explain()`` names
  the one a job uses and why.

A micro-batch is the offsets ``[start, end)`` of each partition (``funke.connectors.kafka_offsets``),
so a batch replayed after a restart reads exactly the same records while Kafka retains them.

``events=N`` ends a streaming run after ``N`` offsets in all: the budget goes to the
partitions one offset at a time, always to the partition read least so far (ties: the
lowest partition), so the records read do not depend on how micro-batches cut them, and a
bounded run with ``events=N`` reads the same ones when they were all there at the start.
On a topic written by transactions, commit markers take offsets too (Kafka's rule).

>>> src = kafka("clicks", schema="user string, n bigint", events=10)
>>> (src.bounded, src.schema.names, src.describe())
(True, ('user', 'n'), 'kafka(clicks at 127.0.0.1:9092, json, from earliest, 10 events)')
>>> kafka("clicks", schema="user string", metadata=["timestamp", "partition"]).schema.names
('user', 'kafka_timestamp', 'kafka_partition')
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from funke.connectors.base import SourceSpec, check_json_rules, check_timestamp_format
from funke.connectors.kafka_offsets import CHUNK, broker_lost, broker_unreachable, topic_partition
from funke.errors import EnvironmentSetupError, PlanError, SchemaError, SourceError
from funke.plan.changelog import ROW_KIND
from funke.plan.types import Field, Schema

if TYPE_CHECKING:
    import pyarrow as pa

FORMATS = ("json", "csv", "raw")
#: Kafka's record metadata, as columns ``kafka_<name>`` on request (``metadata=[...]``).
METADATA = {"key": "binary", "topic": "string", "partition": "int", "offset": "bigint", "timestamp": "timestamp"}
#: The columns of the raw record frame the reader hands Spark (before parsing).
RAW_DDL = "key binary, value binary, topic string, partition int, offset bigint, timestamp timestamp"
ON_BROKER_LOSS = ("fail", "wait")
CONNECTORS = ("auto", "spark", "python")
PYTHON_ENGINE = "funke's Python data source over confluent-kafka"
SESSION_NOTE = "a SparkSession of your own without it (spark.jars) reads with funke's Python data source instead"
#: What only the Python data source does: (applies to (source, streaming?), why) — the JVM connector's gaps.
ONLY_PYTHON = (
    (
        lambda s, streaming: streaming and s.bounded,
        "events=N or ending= ends a streaming read, and Spark's Kafka source has no end in a streaming query",
    ),
    (lambda s, streaming: bool(s.options), "**options are librdkafka (confluent-kafka) settings"),
)


# -- the description ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KafkaSource(SourceSpec):
    """Records of Kafka topics as rows of the declared schema (replayable by offset).

    ``format``: ``json`` (each value a JSON object; its fields by name), ``csv`` (each value
    one CSV line, fields in schema order) or ``raw`` (columns ``key`` and ``value``, bytes; or, with a
    schema of one string or binary column, each record's value as that column, Flink's raw format).
    A value that does not parse or does not fit the schema, and a record with no value, go
    to the job's dead letters with topic, partition and offset; the job goes on. An upsert topic
    (``upsert_key``, Flink's upsert-kafka table) reads a record with no value as a delete.
    """

    topics: tuple[str, ...]
    declared: Schema
    bootstrap: str
    format: str
    starting: Any
    events: int | None
    max_rows_per_batch: int
    metadata: tuple[str, ...]
    isolation: str
    create: int | None  # partitions of a missing topic to create; None: a missing topic is an error
    on_broker_loss: str
    broker_timeout_s: float
    options: tuple[tuple[str, str], ...]
    #: Flink's per-partition watermarks (True), or Spark's one over all partitions (False).
    partition_watermarks: bool = True
    #: "auto" (Spark's connector where it serves), "spark" (it or an error) or "python" (``CONNECTORS``).
    connector: str = "auto"
    #: Flink's ``json.ignore-parse-errors``: a JSON value that fits no rule of Flink's JSON format is NULL, not a dead letter.
    ignore_parse_errors: bool = False
    #: Flink's upsert-kafka: the primary key, read from each record's key (a JSON object of its columns), a record with
    #: no value a delete, each row's kind (``+I``, ``-D``) in ``ROW_KIND``; ``value_except_key``: ``EXCEPT_KEY``.
    upsert_key: tuple[str, ...] = ()
    value_except_key: bool = False
    #: Flink's CDC formats: "debezium" (each value ``{"before", "after", "op"}``, the kinds of its changes in
    #: ``ROW_KIND``), "debezium-schema" (that in ``{"schema", "payload"}``), "canal" (canal-json), "maxwell"
    #: (maxwell-json), or "" (each value a row). ``include``: canal-json's database and table regexes ("": any).
    envelope: str = ""
    include: tuple[str, str] = ("", "")
    #: Flink's ``json.fail-on-missing-field``: a JSON value without a field of the schema is a dead letter.
    fail_on_missing_field: bool = False
    #: Where the read ends (Flink's ``scan.bounded.mode``): None (never), "latest" (the offsets at the start), a
    #: ``datetime`` (each partition before its first record at or after it) or ``((partition key, offset), ...)``.
    ending: Any = None
    #: Flink's ``json.timestamp-format.standard`` and TIMESTAMP_LTZ columns (``sources.FileSource``'s).
    timestamp_format: str | None = None
    instants: tuple[str, ...] = ()
    kind: ClassVar[str] = "kafka"

    @property
    def value_schema(self) -> Schema:
        """The columns parsed from each record's value (``key, value`` bytes for raw)."""
        if self.format == "raw" and not len(self.declared):
            return Schema((Field("key", "binary"), Field("value", "binary")))
        return self.declared

    @property
    def schema(self) -> Schema:
        kind = (Field(ROW_KIND, "string"),) if self.upsert_key or self.envelope else ()
        return Schema(kind + self.value_schema.fields + tuple(Field(f"kafka_{m}", METADATA[m]) for m in self.metadata))

    @property
    def bounded(self) -> bool:
        return self.events is not None or self.ending is not None

    @property
    def split_watermarks(self) -> bool:
        return self.partition_watermarks

    @property
    def batchable(self) -> bool:
        return True  # a bounded run reads up to the latest offsets at its start, as Flink's bounded KafkaSource

    def describe(self) -> str:
        end = f", {self.events:,} events" if self.events is not None else ""
        end += f", to {_starting_text(self.ending)}" if self.ending is not None else ""
        upsert = f", upserts by key ({', '.join(self.upsert_key)})" if self.upsert_key else ""
        fmt = f"{self.envelope.split('-')[0]}-json" if self.envelope else self.format
        return f"kafka({', '.join(self.topics)} at {self.bootstrap}, {fmt}{upsert}, from {_starting_text(self.starting)}{end})"

    def fingerprint(self) -> str:
        return f"kafka({', '.join(self.topics)}: {self.format}: {self.schema})"

    def python_only(self, *, streaming: bool) -> str | None:
        """Why this source needs funke's Python data source whatever the session has, or None."""
        if self.connector == "python":
            return "asked for with connector='python'"
        for applies, why in ONLY_PYTHON:
            if applies(self, streaming):
                return why
        return None

    def engine(self) -> str:
        """Which code reads the topic, and why, for ``explain()`` (sessions funke creates load Spark's connector)."""
        from funke.config import settings
        from funke.connectors import kafka_jvm

        anyway = self.python_only(streaming=False)
        if anyway is not None:
            return f"{PYTHON_ENGINE} ({anyway})"
        chosen = settings()
        connector = kafka_jvm.resolve(chosen.services_root, chosen.kafka_connector)
        if not connector.available:
            return f"{PYTHON_ENGINE} ({connector.reason})"
        streaming = self.python_only(streaming=True)
        if streaming is not None:
            return f"streaming: {PYTHON_ENGINE} ({streaming}); bounded runs (execute(bounded=True)): {connector.describe()}"
        return f"{connector.describe()}; {SESSION_NOTE}"

    def client_config(self, **extra: Any) -> dict[str, Any]:
        from funke.connectors.kafka_client import client_config

        return client_config(self.bootstrap, {**dict(self.options), **extra})


def kafka(
    topics: str | Sequence[str],
    *,
    schema: str | Schema | type | None = None,
    bootstrap: str = "127.0.0.1:9092",
    format: str = "json",
    starting: str | dt.datetime | Mapping[Any, int] = "earliest",
    events: int | None = None,
    max_rows_per_batch: int = 500_000,
    metadata: Sequence[str] = (),
    isolation: str = "read_committed",
    create: bool = False,
    partitions: int = 1,
    on_broker_loss: str = "fail",
    broker_timeout: float = 60.0,
    partition_watermarks: bool = True,
    connector: str = "auto",
    ignore_parse_errors: bool = False,
    ending: str | dt.datetime | Mapping[Any, int] | None = None,
    fail_on_missing_field: bool = False,
    timestamp_format: str | None = None,
    instants: Sequence[str] = (),
    **options: Any,
) -> KafkaSource:
    """Rows from Kafka topics, replayable after a restart from Spark's offset log.

    ``starting``: ``"earliest"``, ``"latest"``, a ``datetime`` (each partition from its first
    record at or after that time: Kafka's offsets-for-times) or ``{partition: offset}``
    (``{(topic, partition): offset}`` for several topics; partitions not named start at
    the earliest). ``events=N`` ends the run after ``N`` offsets (see the module doc);
    ``execute(bounded=True)`` reads up to the latest offsets at the start (at most ``N``).
    ``ending`` ends the read, streaming or bounded, as Flink's bounded ``KafkaSource`` (``scan.bounded.mode``):
    ``"latest"`` (the offsets when the job starts), a ``datetime`` (each partition before its first record at or after
    that time, its end when none) or ``{partition: offset}`` (each partition before that offset; partitions not named
    read nothing). The partitions are those of the topics at the start. A bounded run reads no further than the latest
    offsets at its start, where a streaming one waits for an offset named past them.
    ``metadata``: any of key, topic, partition, offset, timestamp, as columns
    ``kafka_<name>``; ``kafka_timestamp`` (the record's timestamp) can be the event time.
    ``create=True`` creates a missing topic with ``partitions`` partitions; without it a
    missing topic is an error. ``on_broker_loss``: ``"fail"`` (the job fails with a
    ``SourceError`` naming the address once the broker has not answered for
    ``broker_timeout`` seconds, whether the driver was asking for offsets or a task was
    reading; restarted on its checkpoint once Kafka is back, it goes on after its last
    committed batch, exactly once into funke's exactly-once sinks) or ``"wait"`` (the
    driver and the readers wait for the broker as long as it takes and the job goes on by
    itself; a Kafka sink's batch in flight still gives up after the sink's ``timeout``, so
    give that sink a timeout longer than the outages to ride out).

    Watermarks, given with the source (``env.from_source(kafka(...), strategy)``), are Flink's
    per partition (``partition_watermarks=True``): each partition has its own (its largest
    event time minus the bound), the source's is the minimum over the partitions, a partition
    that has sent nothing yet holds it at -infinity, and with ``strategy.with_idleness(d)`` a
    partition quiet for ``d`` stops holding it back until it sends again. Spark's watermark is
    one per query from the largest event time over all partitions, so funke computes this one
    on the driver after each micro-batch, and the event-time operators downstream (windows,
    joins, timers) run on funke's general path. The partitions are those of the topics when
    the job starts; one added later counts from its first record. ``partition_watermarks=False``
    takes Spark's watermark instead (Spark's own window operators, faster; a partition behind
    the others by more than the bound has its records dropped as late). A
    ``WatermarkGenerator`` (``for_generator``) sees the records of all partitions in read order.
    ``options`` go to
    librdkafka (e.g. ``**{"security.protocol": "SSL"}``) and so take the Python data source.

    Values in JSON are read by the rules of Flink's JSON format (:mod:`funke.spark.parse`); a record that breaks
    them is a dead letter, or with ``ignore_parse_errors=True`` (``json.ignore-parse-errors``) its value is NULL. A field
    of the schema the value lacks is NULL, or with ``fail_on_missing_field=True`` (``json.fail-on-missing-field``) the
    record is a dead letter. ``timestamp_format`` and ``instants``: DATE and TIMESTAMP columns read as Flink's json
    format reads them, as ``fk.sources.files`` takes them.

    ``connector``: ``"auto"`` reads with Spark's own Kafka connector wherever it serves, else with
    funke's Python data source (the module doc says when); ``"spark"`` insists on Spark's (an error
    when the job cannot have it); ``"python"`` always takes funke's.
    """
    names = (topics,) if isinstance(topics, str) else tuple(topics)
    if not names or not all(isinstance(t, str) and t for t in names):
        raise PlanError(f"kafka() needs one or more topic names, got {topics!r}")
    if len(set(names)) != len(names):
        raise PlanError(f"kafka(): topics repeat in {list(names)}")
    fmt = format.lower()
    if fmt not in FORMATS:
        raise PlanError(f"kafka(format=...) must be one of {', '.join(FORMATS)}, got {format!r}")
    declared = Schema.of(schema)
    if declared is None:
        if fmt != "raw":
            raise SchemaError(f"kafka(format={fmt!r}) needs schema= (e.g. 'user string, ts timestamp'), or use format='raw'")
        declared = Schema(())
    elif fmt == "raw" and (len(declared) != 1 or declared.fields[0].dtype not in ("string", "binary")):
        raise SchemaError(
            "kafka(format='raw') gives the columns key and value (bytes), or with a schema of one string or binary column "
            f"each record's value as that column; got schema {declared}"
        )
    unknown = [m for m in metadata if m not in METADATA]
    if unknown:
        raise PlanError(f"kafka(metadata=...): unknown {unknown}; choose from {', '.join(METADATA)}")
    clash = [f"kafka_{m}" for m in metadata if f"kafka_{m}" in declared]
    if clash:
        raise SchemaError(f"kafka(): the schema already has column(s) {clash} that metadata= would add")
    if events is not None and events < 0:
        raise PlanError(f"kafka(events=...) must be >= 0, got {events}")
    if max_rows_per_batch <= 0:
        raise PlanError(f"kafka(max_rows_per_batch=...) must be positive, got {max_rows_per_batch}")
    if isolation not in ("read_committed", "read_uncommitted"):
        raise PlanError(f"kafka(isolation=...) must be 'read_committed' or 'read_uncommitted', got {isolation!r}")
    if on_broker_loss not in ON_BROKER_LOSS:
        raise PlanError(f"kafka(on_broker_loss=...) must be 'fail' or 'wait', got {on_broker_loss!r}")
    if partitions <= 0:
        raise PlanError(f"kafka(partitions=...) is the number of partitions of a topic to create, got {partitions}")
    if connector not in CONNECTORS:
        raise PlanError(f"kafka(connector=...) must be one of {', '.join(CONNECTORS)}, got {connector!r}")
    check_json_rules("kafka", fmt, ignore_parse_errors, fail_on_missing_field, declared)
    check_timestamp_format("kafka", fmt, timestamp_format, tuple(instants), declared)
    _check_starting(starting, names)
    if ending is not None:
        _check_starting(ending, names, "ending")
        if ending == "earliest":
            raise PlanError("kafka(ending=...) must be 'latest', a datetime or {partition: offset}, got 'earliest'")
    require_kafka()
    return KafkaSource(
        names, declared, bootstrap, fmt, starting if not isinstance(starting, Mapping) else tuple(sorted(_key_starting(starting, names).items())),
        events, max_rows_per_batch, tuple(metadata), isolation, partitions if create else None, on_broker_loss, float(broker_timeout),
        tuple(sorted((k, str(v)) for k, v in options.items())), bool(partition_watermarks), connector, bool(ignore_parse_errors),
        ending=ending if not isinstance(ending, Mapping) else tuple(sorted(_key_starting(ending, names, "ending").items())),
        fail_on_missing_field=bool(fail_on_missing_field), timestamp_format=timestamp_format, instants=tuple(instants),
    )


def _starting_text(starting: Any) -> str:
    if isinstance(starting, dt.datetime):
        return starting.isoformat()
    if isinstance(starting, tuple):
        return "offsets " + ", ".join(f"{k}@{v}" for k, v in starting)
    return str(starting)


def _check_starting(starting: Any, topics: tuple[str, ...], what: str = "starting") -> None:
    if isinstance(starting, Mapping):
        _key_starting(starting, topics, what)
    elif not isinstance(starting, dt.datetime) and starting not in ("earliest", "latest"):
        raise PlanError(f"kafka({what}=...) must be 'earliest', 'latest', a datetime or {{partition: offset}}, got {starting!r}")


def _key_starting(starting: Mapping[Any, int], topics: tuple[str, ...], what: str = "starting") -> dict[str, int]:
    """``{partition: offset}`` (one topic) or ``{(topic, partition): offset}`` → ``{"topic/partition": offset}``."""
    out = {}
    for k, v in starting.items():
        if isinstance(k, int) and len(topics) == 1:
            topic, part = topics[0], k
        elif isinstance(k, tuple) and len(k) == 2 and k[0] in topics and isinstance(k[1], int):
            topic, part = k
        else:
            need = "{partition: offset}" if len(topics) == 1 else "{(topic, partition): offset} naming one of the topics"
            raise PlanError(f"kafka({what}=...): key {k!r} is not a partition; give {need}")
        if not isinstance(v, int) or v < 0:
            raise PlanError(f"kafka({what}=...): offset {v!r} of {topic}/{part} must be a whole number >= 0")
        out[f"{topic}/{part}"] = v
    return out


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReaderConfig:
    """Everything a Spark task needs to read (picklable)."""

    spec: KafkaSource
    parallelism: int
    #: The end-of-input column of a finite source read as a stream (None: no end row).
    eos_column: str | None




def raw_arrow_schema(eos_column: str | None) -> pa.Schema:
    import pyarrow as pa

    fields = [
        pa.field("key", pa.binary()), pa.field("value", pa.binary()), pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()), pa.field("offset", pa.int64()), pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    ]
    if eos_column:
        fields.append(pa.field(eos_column, pa.bool_()))
    return pa.schema(fields)


def read_partition(config: ReaderConfig, part: tuple[Any, ...]) -> Iterator[pa.RecordBatch]:
    """One offset range's records as Arrow batches of the raw columns (plus the end flag)."""
    import pyarrow as pa

    schema = raw_arrow_schema(config.eos_column)
    if part[0] == "end":
        yield pa.RecordBatch.from_arrays([pa.nulls(1, f.type) for f in schema][:-1] + [pa.array([True])], schema=schema)
        return
    _, key, lo, hi = part
    topic, partition = topic_partition(key)
    spec = config.spec
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    consumer = Consumer(spec.client_config(**{
        "group.id": "funke-reader", "enable.auto.commit": False, "isolation.level": spec.isolation,
        "enable.partition.eof": True, "fetch.max.bytes": 64 << 20, "max.partition.fetch.bytes": 16 << 20,
        # An offset the broker no longer has is an error, never a silent jump to the end (or start).
        "auto.offset.reset": "error",
    }))
    import time

    try:
        consumer.assign([TopicPartition(topic, partition, lo)])
        pos, quiet_since = lo, time.monotonic()
        while pos < hi:
            msgs = consumer.consume(min(CHUNK, hi - pos), timeout=1.0)
            keys, values, offsets, stamps = [], [], [], []
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        pos = max(pos, m.offset())
                        continue
                    if err.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
                        raise SourceError(
                            f"Kafka at {spec.bootstrap}: offsets {pos}..{hi - 1} of {key} are no longer there ({err.str()}): "
                            "deleted by retention, or the topic was recreated; the records this batch read before cannot be read again"
                        )
                    if not broker_unreachable(err):
                        raise SourceError(f"Kafka at {spec.bootstrap}: reading {key} failed ({err.str()})")
                    continue  # the broker is away: the wait below decides (on_broker_loss)
                off = m.offset()
                if off >= hi:
                    pos = hi
                    continue
                keys.append(m.key())
                values.append(m.value())
                offsets.append(off)
                stamps.append(m.timestamp()[1])
                pos = off + 1
            if offsets:
                quiet_since = time.monotonic()
                n = len(offsets)
                arrays = [
                    pa.array(keys, pa.binary()), pa.array(values, pa.binary()), pa.array([topic] * n, pa.string()),
                    pa.array([partition] * n, pa.int32()), pa.array(offsets, pa.int64()),
                    pa.array(stamps, pa.int64()).cast(pa.timestamp("ms", tz="UTC")).cast(pa.timestamp("us", tz="UTC")),
                ]
                if config.eos_column:
                    arrays.append(pa.array([False] * n, pa.bool_()))
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)
            elif pos < hi:
                # Nothing came: past aborted records or markers, librdkafka's position moves on.
                moved = consumer.position([TopicPartition(topic, partition)])[0].offset
                if moved >= hi:
                    break
                waited = time.monotonic() - quiet_since
                if spec.on_broker_loss == "fail" and waited > spec.broker_timeout_s:
                    raise SourceError(
                        broker_lost(spec, f"reading {key} at offsets {pos}..{hi - 1}", waited, "no record came, or retention deleted them")
                    )
    finally:
        consumer.close()


# -- the client ------------------------------------------------------------------------------------


def require_kafka() -> None:
    """``EnvironmentSetupError`` with the install command when confluent-kafka is missing."""
    import importlib.util

    if importlib.util.find_spec("confluent_kafka") is None:
        raise EnvironmentSetupError("funke's Kafka support needs the 'confluent-kafka' package: pip install 'funke[kafka]'")


def check(spec: KafkaSource) -> None:
    """Before the job starts: the broker answers and the topics exist (created when ``create`` is set)."""
    from funke.connectors import kafka_client as kcl

    where = f"kafka source ({', '.join(spec.topics)})"
    extra = {k: v for k, v in spec.options}
    client = kcl.admin(spec.bootstrap, extra, where, SourceError)
    for topic in spec.topics:
        if spec.create is not None:
            kcl.ensure_topic(client, topic, spec.bootstrap, where, SourceError, partitions=spec.create)
        elif kcl.topic_partitions(client, topic, spec.bootstrap, where, SourceError) is None:
            raise SourceError(f"{where}: {kcl.missing_topic(topic, spec.bootstrap)}")


