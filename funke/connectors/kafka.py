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

An offset holds, per partition (``"topic/partition"``), the next offset to read, plus the
offsets the query started from (``origin``) and whether the end-of-input row has been
released. A micro-batch is the offsets ``[start, end)`` of each partition, so a batch
replayed after a restart reads exactly the same records while Kafka retains them.

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
>>> fill({"t/0": 0, "t/1": 0}, {"t/0": 10, "t/1": 2}, 7)
{'t/0': 5, 't/1': 2}
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from funke.connectors.base import SourceSpec
from funke.errors import EnvironmentSetupError, PlanError, SchemaError, SourceError
from funke.plan.changelog import ROW_KIND
from funke.plan.types import Field, Schema

if TYPE_CHECKING:
    import pyarrow as pa

#: Records per ``consume`` call, and the most in one Arrow batch.
CHUNK = 20_000
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
        lambda s, streaming: streaming and s.events is not None,
        "events=N ends a streaming read after N records, and Spark's Kafka source has no end in a streaming query",
    ),
    (lambda s, streaming: bool(s.options), "**options are librdkafka (confluent-kafka) settings"),
)


# -- the description ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KafkaSource(SourceSpec):
    """Records of Kafka topics as rows of the declared schema (replayable by offset).

    ``format``: ``json`` (each value a JSON object; its fields by name), ``csv`` (each value
    one CSV line, fields in schema order) or ``raw`` (columns ``key`` and ``value``, bytes).
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
    #: Flink's debezium-json: "debezium" (each value ``{"before", "after", "op"}``, the kinds of its changes in
    #: ``ROW_KIND``), "debezium-schema" (that in ``{"schema", "payload"}``), or "" (each value a row).
    envelope: str = ""
    kind: ClassVar[str] = "kafka"

    @property
    def value_schema(self) -> Schema:
        """The columns parsed from each record's value (``key, value`` bytes for raw)."""
        if self.format == "raw":
            return Schema((Field("key", "binary"), Field("value", "binary")))
        return self.declared

    @property
    def schema(self) -> Schema:
        kind = (Field(ROW_KIND, "string"),) if self.upsert_key or self.envelope else ()
        return Schema(kind + self.value_schema.fields + tuple(Field(f"kafka_{m}", METADATA[m]) for m in self.metadata))

    @property
    def bounded(self) -> bool:
        return self.events is not None

    @property
    def split_watermarks(self) -> bool:
        return self.partition_watermarks

    @property
    def batchable(self) -> bool:
        return True  # a bounded run reads up to the latest offsets at its start, as Flink's bounded KafkaSource

    def describe(self) -> str:
        end = f", {self.events:,} events" if self.events is not None else ""
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
    **options: Any,
) -> KafkaSource:
    """Rows from Kafka topics, replayable after a restart from Spark's offset log.

    ``starting``: ``"earliest"``, ``"latest"``, a ``datetime`` (each partition from its first
    record at or after that time: Kafka's offsets-for-times) or ``{partition: offset}``
    (``{(topic, partition): offset}`` for several topics; partitions not named start at
    the earliest). ``events=N`` ends the run after ``N`` offsets (see the module doc);
    ``execute(bounded=True)`` reads up to the latest offsets at the start (at most ``N``).
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
    them is a dead letter, or with ``ignore_parse_errors=True`` (``json.ignore-parse-errors``) its value is NULL.

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
    elif fmt == "raw" and len(declared):
        raise SchemaError("kafka(format='raw') gives the columns key and value (bytes): leave schema= out")
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
    if ignore_parse_errors and fmt != "json":
        raise PlanError(f"kafka(ignore_parse_errors=True) is for format='json', got format={format!r}")
    _check_starting(starting, names)
    require_kafka()
    return KafkaSource(
        names, declared, bootstrap, fmt, starting if not isinstance(starting, Mapping) else tuple(sorted(_key_starting(starting, names).items())),
        events, max_rows_per_batch, tuple(metadata), isolation, partitions if create else None, on_broker_loss, float(broker_timeout),
        tuple(sorted((k, str(v)) for k, v in options.items())), bool(partition_watermarks), connector, bool(ignore_parse_errors),
    )


def _starting_text(starting: Any) -> str:
    if isinstance(starting, dt.datetime):
        return starting.isoformat()
    if isinstance(starting, tuple):
        return "offsets " + ", ".join(f"{k}@{v}" for k, v in starting)
    return str(starting)


def _check_starting(starting: Any, topics: tuple[str, ...]) -> None:
    if isinstance(starting, str):
        if starting not in ("earliest", "latest"):
            raise PlanError(f"kafka(starting=...) must be 'earliest', 'latest', a datetime or {{partition: offset}}, got {starting!r}")
    elif isinstance(starting, Mapping):
        _key_starting(starting, topics)
    elif not isinstance(starting, dt.datetime):
        raise PlanError(f"kafka(starting=...) must be 'earliest', 'latest', a datetime or {{partition: offset}}, got {starting!r}")


def _key_starting(starting: Mapping[Any, int], topics: tuple[str, ...]) -> dict[str, int]:
    """``{partition: offset}`` (one topic) or ``{(topic, partition): offset}`` → ``{"topic/partition": offset}``."""
    out = {}
    for k, v in starting.items():
        if isinstance(k, int) and len(topics) == 1:
            topic, part = topics[0], k
        elif isinstance(k, tuple) and len(k) == 2 and k[0] in topics and isinstance(k[1], int):
            topic, part = k
        else:
            need = "{partition: offset}" if len(topics) == 1 else "{(topic, partition): offset} naming one of the topics"
            raise PlanError(f"kafka(starting=...): key {k!r} is not a partition; give {need}")
        if not isinstance(v, int) or v < 0:
            raise PlanError(f"kafka(starting=...): offset {v!r} of {topic}/{part} must be a whole number >= 0")
        out[f"{topic}/{part}"] = v
    return out


# -- offsets ------------------------------------------------------------------------------------


def fill(levels: Mapping[str, int], caps: Mapping[str, int], budget: int) -> dict[str, int]:
    """Spend ``budget`` offsets one at a time on the partition read least so far (ties: the first
    in order) that still has some, up to ``caps``: the new levels.

    Computed at once, not one offset at a time: find the level ``t`` every partition below
    it is raised to, then give what is left one each, in order, to those at ``t``.
    """
    keys = list(levels)
    room = sum(caps[k] - levels[k] for k in keys)
    if budget >= room:
        return dict(caps)

    def spent(t: int) -> int:
        return sum(max(0, min(t, caps[k]) - levels[k]) for k in keys)

    lo, hi = min(levels.values()), max(caps.values())
    while lo < hi:  # the highest t with spent(t) <= budget
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if spent(mid) <= budget else (lo, mid - 1)
    out = {k: max(levels[k], min(lo, caps[k])) for k in keys}
    left = budget - spent(lo)
    for k in keys:
        if left == 0:
            break
        if out[k] == lo and caps[k] > lo:
            out[k] += 1
            left -= 1
    return out


def _order(key: str) -> tuple[str, int]:
    topic, _, part = key.rpartition("/")
    return topic, int(part)


@dataclass(frozen=True)
class ReaderConfig:
    """Everything a Spark task needs to read (picklable)."""

    spec: KafkaSource
    parallelism: int
    #: The end-of-input column of a finite source read as a stream (None: no end row).
    eos_column: str | None


class Cluster:
    """Partitions and their offsets, asked of the broker with one consumer (driver side)."""

    def __init__(self, spec: KafkaSource):
        self.spec = spec
        self.address = spec.bootstrap
        self.consumer = self._consumer()

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer(self.spec.client_config(**{
            "group.id": "funke-offsets", "enable.auto.commit": False, "isolation.level": self.spec.isolation,
            "socket.connection.setup.timeout.ms": max(1000, int(self.spec.broker_timeout_s * 1000)),
        }))

    def close(self) -> None:
        self.consumer.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def _timeout(self) -> float:
        return 10.0 if self.spec.on_broker_loss == "wait" else max(1.0, self.spec.broker_timeout_s)

    def _retry(self, what: str, call: Any, transient: tuple[str, ...] = ()) -> Any:
        """``call()``; a broker that does not answer fails the job after ``broker_timeout`` seconds, or is
        waited for as long as it takes (``on_broker_loss``). ``transient``: names of further errors that
        mean the same here."""
        import time

        from confluent_kafka import KafkaException

        started = time.monotonic()
        while True:
            try:
                return call()
            except KafkaException as e:
                err = e.args[0] if e.args else e
                waited = time.monotonic() - started
                if not (broker_unreachable(err) or getattr(err, "name", lambda: "")() in transient):
                    raise SourceError(f"Kafka at {self.address}: {what} failed ({_text(err)})") from None
                if self.spec.on_broker_loss == "fail" and waited >= self.spec.broker_timeout_s:
                    raise SourceError(broker_lost(self.spec, what, waited, _text(err))) from None
                # A fresh client: one that saw the broker go may keep its stale metadata ("unknown partition")
                # after the broker is back, and never refresh it for a topic it is not assigned.
                self.consumer.close()
                self.consumer = self._consumer()
                time.sleep(0.5)

    def partitions(self) -> list[str]:
        """Every partition of the topics, as ``"topic/partition"``; ``SourceError`` for a missing topic."""
        from confluent_kafka import KafkaError, KafkaException

        def listing() -> Any:
            meta = self.consumer.list_topics(timeout=self._timeout())
            for topic in self.spec.topics:  # a broker just back may list a topic before it has its leaders
                t = meta.topics.get(topic)
                if t is not None and t.error is not None and t.error.code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise KafkaException(t.error)
            return meta

        meta = self._retry("listing topics", listing)
        keys = []
        for topic in self.spec.topics:
            t = meta.topics.get(topic)
            if t is None or t.error is not None:
                from funke.connectors.kafka_client import missing_topic

                raise SourceError(f"kafka source: {missing_topic(topic, self.address)}")
            keys.extend(f"{topic}/{p}" for p in sorted(t.partitions))
        return keys

    def bounds(self, keys: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per partition, (earliest, latest) offsets (latest: the last stable offset when read_committed)."""
        from confluent_kafka import TopicPartition

        out = {}
        for key in keys:
            topic, part = _order(key)
            tp = TopicPartition(topic, part)
            out[key] = self._retry(
                f"reading the offsets of {key}",
                lambda tp=tp: self.consumer.get_watermark_offsets(tp, timeout=self._timeout(), cached=False),
                # a broker shutting down still lists the topic but no longer knows the partition it just listed
                transient=("_UNKNOWN_PARTITION",),
            )
        return out

    def at_time(self, keys: Sequence[str], when: dt.datetime) -> dict[str, int]:
        """Per partition, the first offset whose record's timestamp is at or after ``when`` (the end when none)."""
        from confluent_kafka import TopicPartition

        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        ms = int(when.timestamp() * 1000)
        asked = [TopicPartition(*_order(k), ms) for k in keys]
        found = self._retry("finding offsets for a time", lambda: self.consumer.offsets_for_times(asked, timeout=self._timeout()))
        ends = self.bounds(keys)
        return {k: (tp.offset if tp.offset >= 0 else ends[k][1]) for k, tp in zip(keys, found)}


#: librdkafka's errors for a broker it cannot reach or that has not answered (yet), besides those it marks retriable.
_UNREACHABLE = (
    "_TRANSPORT", "_ALL_BROKERS_DOWN", "_TIMED_OUT", "_TIMED_OUT_QUEUE", "_RESOLVE", "_WAIT_COORD",
    # a broker shutting down or starting up: its partitions have no leader for a moment
    "LEADER_NOT_AVAILABLE", "NOT_LEADER_FOR_PARTITION", "BROKER_NOT_AVAILABLE",
)  # fmt: skip


def broker_unreachable(err: Any) -> bool:
    """True for an error that means "the broker did not answer" (down, restarting, a leader not elected yet)."""
    name = getattr(err, "name", lambda: "")()
    if name in _UNREACHABLE or getattr(err, "retriable", lambda: False)():
        return True
    text = str(err).lower()
    return "timed out" in text or "transport" in text or "broker connections are down" in text


def broker_lost(spec: KafkaSource, what: str, waited: float, cause: str) -> str:
    """The message of a job that gives up on its broker (``on_broker_loss="fail"``)."""
    return (
        f"Kafka at {spec.bootstrap} did not answer for {waited:.0f} s ({what}: {cause}); with on_broker_loss='fail' "
        f"and broker_timeout={spec.broker_timeout_s:g} the job stops here: restart it on its checkpoint once the broker "
        "is back (it goes on after its last committed batch), or use on_broker_loss='wait'"
    )


def _text(err: Any) -> str:
    return err.str() if hasattr(err, "str") else str(err)


def initial_offset(spec: KafkaSource) -> dict[str, Any]:
    """Where the query starts, by ``starting``; also its ``origin`` (for ``events``)."""
    with Cluster(spec) as cluster:
        keys = cluster.partitions()
        bounds = cluster.bounds(keys)
        s = spec.starting
        if s == "earliest":
            at = {k: bounds[k][0] for k in keys}
        elif s == "latest":
            at = {k: bounds[k][1] for k in keys}
        elif isinstance(s, dt.datetime):
            at = cluster.at_time(keys, s)
        else:
            given = dict(s)
            missing = sorted(set(given) - set(keys))
            if missing:
                raise SourceError(f"kafka(starting=...) names partition(s) {missing} that Kafka at {spec.bootstrap} does not have")
            at = {k: max(bounds[k][0], given.get(k, bounds[k][0])) for k in keys}
    return {"at": at, "origin": dict(at), "ended": spec.events == 0}


def latest_offset(spec: KafkaSource, start: dict[str, Any], max_rows: int | None) -> dict[str, Any]:
    """The end of the next batch: at most ``max_rows`` offsets, none past ``events``.

    A partition that appears while the query runs starts at its earliest offset.
    """
    if start["ended"]:
        return start
    with Cluster(spec) as cluster:
        keys = cluster.partitions()
        bounds = cluster.bounds(keys)
    at, origin = dict(start["at"]), dict(start["origin"])
    for k in keys:
        if k not in at:
            at[k] = origin[k] = bounds[k][0]
    keys = sorted(at, key=_order)
    levels = {k: at[k] - origin[k] for k in keys}
    caps = {k: max(at[k], bounds.get(k, (0, at[k]))[1]) - origin[k] for k in keys}
    budget = max_rows if max_rows is not None else sum(caps[k] - levels[k] for k in keys)
    if spec.events is not None:
        budget = min(budget, spec.events - sum(levels.values()))
    new = fill(levels, caps, budget)
    end = {k: origin[k] + new[k] for k in keys}
    ended = spec.events is not None and sum(new.values()) >= spec.events
    return {"at": end, "origin": origin, "ended": ended}


def plan_partitions(config: ReaderConfig, start: dict[str, Any], end: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The batch as offset ranges ``(key, lo, hi)``: one per partition, a large one cut so every
    core reads; plus the end row when this batch reaches the end."""
    ranges = [(k, start["at"].get(k, end["origin"][k]), hi) for k, hi in end["at"].items()]
    ranges = [(k, lo, hi) for k, lo, hi in ranges if hi > lo]
    total = sum(hi - lo for _, lo, hi in ranges)
    parts: list[tuple[Any, ...]] = []
    if total:
        piece = max(CHUNK, -(-total // max(1, config.parallelism)))
        for k, lo, hi in ranges:
            parts.extend(("range", k, a, min(a + piece, hi)) for a in range(lo, hi, piece))
    if config.eos_column and end["ended"] and not start["ended"]:
        parts.append(("end",))
    return parts


def bounded_ranges(spec: KafkaSource, parallelism: int) -> list[tuple[Any, ...]]:
    """A bounded run: from ``starting`` up to the latest offsets now (at most ``events`` in all)."""
    start = initial_offset(spec)
    end = latest_offset(spec, start, None)
    return plan_partitions(ReaderConfig(spec, parallelism, None), start, end)


# -- reading ------------------------------------------------------------------------------------


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
    topic, partition = _order(key)
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


def records_behind(spec: KafkaSource, end_offset: Any) -> int | None:
    """Records in ``spec``'s partitions after ``end_offset`` (a micro-batch's end, as Spark reports it):
    how far a query reading them is behind. None when the offset is not this source's or the broker
    does not answer (the dashboard asks; it must not fail for it)."""
    at = end_offset.get("at") if isinstance(end_offset, dict) else None
    if not isinstance(at, dict) or not at or not {_order(k)[0] for k in at} <= set(spec.topics):
        return None
    from dataclasses import replace

    try:  # asked while the dashboard waits: give up after two seconds whatever the job's own broker policy
        with Cluster(replace(spec, on_broker_loss="fail", broker_timeout_s=2.0)) as cluster:
            bounds = cluster.bounds(sorted(at, key=_order))
        return sum(max(0, bounds[k][1] - int(v)) for k, v in at.items())
    except (SourceError, EnvironmentSetupError, KeyError, TypeError, ValueError):
        return None
