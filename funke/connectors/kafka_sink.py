"""Kafka sink (confluent-kafka): each micro-batch in one Kafka transaction together with a batch marker.

Records: one per result row, to ``topic``. The value is the row as a JSON object
(``format="json"``, keys in column order) or as a CSV line (``format="csv"``, no header, RFC 4180
quoting, a null as an empty field). The key is the text of the ``key`` column(s) joined with ``:``
(a null as the empty string), or no key; records are partitioned by it with Java's murmur2 (as
Kafka's Java clients, Kafka Streams and Flink do), so one key's results stay in one partition in order.

Values: strings as they are (JSON-escaped in JSON), integers as exact numbers, decimals as Flink's json and csv
formats write them (Java's ``BigDecimal.stripTrailingZeros()``: ``12.30`` is ``12.3``, ``10.00`` is ``1E+1``), floats as shortest round-trip numbers (NaN and infinities as
``null``: JSON has no spelling for them), booleans ``true``/``false``, dates ``2024-05-01`` and
timestamps as ISO-8601 in UTC with ``Z`` and only the fraction digits needed
(``2024-05-01T12:00:10Z``, ``...T12:00:10.25Z``); ``timestamp_ntz`` without ``Z``. So windowed
results carry ``window_start``/``window_end`` as ISO-8601 strings. Binary and nested columns are
refused: turn them into strings first (``to_json``, ``base64``). Rows are formatted with Arrow
compute kernels, not per row in Python.

Exactly-once (``delivery="exactly-once"``, the default): a transactional producer whose
``transactional.id`` is ``funke-sink:{job}:{name}`` (``name`` defaults to the topic) writes a
batch's records and a marker record in one transaction and commits once per micro-batch. The
marker goes to the compacted topic ``__funke_sink_commits`` (created on demand, one partition)
with key ``{job}:{name}:{query_id}`` and the batch id as value; ``query_id`` is Spark's streaming
query id, kept in its checkpoint. The transactional id is stable across restarts, so a restarted
job's ``init_transactions()`` fences the crashed driver (a zombie can no longer commit) and aborts
its open transaction; then the sink reads its latest committed marker with a ``read_committed``
consumer (once per run, then it remembers) and skips a batch whose id is not above it: the batch
Spark replays after a crash whose transaction had committed is not written again. A consumer
with ``isolation.level=read_committed`` therefore sees every result exactly once; a
``read_uncommitted`` consumer also sees aborted records. A bounded run is replayed by nothing: it
writes its one batch in one transaction without a marker, and running it again writes again.
Under Spark Connect a streaming job's batches are refused (the server does not tell
``foreachBatch`` the query id); bounded runs work.

At-least-once (``delivery="at-least-once"``): an idempotent producer (no duplicates from its own
retries) flushes each batch before Spark commits it; a batch replayed after a crash is written again.
Where the session has Spark's Kafka connector, that producer is the connector's (``funke.spark.kafka_jvm``:
the same records, formatted by Spark expressions, written from the executors); it is also the only
writer of Spark's real-time mode.

Broker lost mid-run: a batch whose commit (or flush) does not finish within ``timeout`` seconds
fails, its transaction is aborted where the broker still answers, and the job fails; restarted on
its checkpoint once the broker is back, it writes from the first uncommitted batch, exactly once.

The exactly-once sink does not use Spark's Kafka writer: it has no transactions (at-least-once only).
It collects each batch to the driver (``toArrow``) and produces from there with librdkafka, as the
PostgreSQL and Redis sinks do.

>>> import funke as fk
>>> fk.sinks.kafka("campaign-counts", key="campaign_id").describe()
'kafka(campaign-counts, json, key campaign_id, at 127.0.0.1:9092, confluent-kafka)'
>>> sink = fk.sinks.kafka("events-out", format="csv", delivery="at-least-once", bootstrap="broker:9092")
>>> sink.describe(), sink.guarantee
('kafka(events-out, csv, no key, at broker:9092, confluent-kafka)', 'at-least-once')
"""

from __future__ import annotations

import decimal
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from funke.connectors.base import BatchSink
from funke.connectors.kafka_client import admin, broker_down, client_config, ensure_topic, missing_topic, topic_partitions
from funke.connectors.postgres import arrow_batch, require
from funke.errors import PlanError, SinkError

if TYPE_CHECKING:
    import pyarrow as pa
    from confluent_kafka import Producer

log = logging.getLogger("funke.sinks")

MARKER_TOPIC = "__funke_sink_commits"
#: The marker topic keeps the latest marker per key; short segments let the compactor drop old ones.
MARKER_TOPIC_CONFIG = {"cleanup.policy": "compact", "segment.ms": str(3_600_000)}
FORMATS = ("json", "csv", "raw")
DELIVERIES = ("exactly-once", "at-least-once")
_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


# -- formatting (Arrow compute: one kernel call per column, not per row) ------------------------


def as_text(column: pa.ChunkedArray | pa.Array, name: str) -> pa.ChunkedArray | pa.Array:
    """A column's values as text (see the module docstring); nulls, NaN and infinities as null.

    >>> import pyarrow as pa, datetime as dt
    >>> t = pa.array([dt.datetime(2024, 5, 1, 12, 0, 10), dt.datetime(2024, 5, 1, 12, 0, 10, 250000)], pa.timestamp("us", "UTC"))
    >>> as_text(t, "t").to_pylist()
    ['2024-05-01T12:00:10Z', '2024-05-01T12:00:10.25Z']
    >>> as_text(pa.array([1.5, float("nan"), None]), "x").to_pylist()
    ['1.5', None, None]
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if pa.types.is_timestamp(t):
        # A zoned timestamp as the naive one of the same epoch value is its UTC wall time: Arrow then prints
        # 10x faster than with a time zone (or strftime), as "2024-05-01 12:00:10.250000".
        naive = pc.cast(pc.cast(column, pa.int64()), pa.timestamp(t.unit)) if t.tz is not None else column
        text = pc.replace_substring(pc.cast(naive, pa.string()), " ", "T", max_replacements=1)
        if t.unit != "s":
            text = pc.replace_substring_regex(text, r"\.?0+$", "")
        return pc.binary_join_element_wise(text, "Z", "") if t.tz is not None else text
    if pa.types.is_floating(t):
        finite = pc.is_finite(column)
        return pc.if_else(finite, pc.cast(column, pa.string()), pa.scalar(None, pa.string()))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.cast(column, pa.string())
    if pa.types.is_decimal(t):
        return decimal_texts(column)
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_date(t) or pa.types.is_time(t):
        return pc.cast(column, pa.string())
    raise SinkError(
        f"the Kafka sink writes text, numbers, booleans, dates and timestamps, not column '{name}' of type {t}: "
        "turn it into a string column first (e.g. with to_json, or base64 for binary)"
    )


#: Enough digits for any DECIMAL (38 at most) to normalize without rounding.
_EXACT = decimal.Context(prec=100)


def decimal_texts(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A DECIMAL column's values as Flink's json and csv formats write them: Java's
    ``BigDecimal.stripTrailingZeros().toString()``, which ``Decimal.normalize()`` prints alike (both follow the same
    rules of scientific notation; ``record_text.decimal_text`` on the JVM).

    >>> import pyarrow as pa
    >>> from decimal import Decimal as D
    >>> decimal_texts(pa.array([D("10.00"), D("4.50"), D("-12300.00"), D("0.00"), None], pa.decimal128(10, 2))).to_pylist()
    ['1E+1', '4.5', '-1.23E+4', '0', None]
    >>> decimal_texts(pa.array([D("0.0000001"), D("0.000001")], pa.decimal128(12, 8))).to_pylist()
    ['1E-7', '0.000001']
    """
    import pyarrow as pa

    return pa.array([None if v is None else str(v.normalize(_EXACT)) for v in column.to_pylist()], pa.string())


def json_values(column: pa.ChunkedArray | pa.Array, name: str) -> pa.ChunkedArray | pa.Array:
    r"""Each value as a JSON literal: a quoted, escaped string for text, dates and timestamps; ``null`` for null.

    >>> import pyarrow as pa
    >>> print(*json_values(pa.array(['say "hi"', "a\\b", "tab\there", "bell\x07", None]), "s").to_pylist())
    "say \"hi\"" "a\\b" "tab\there" "bell\u0007" null
    >>> json_values(pa.array([True, None]), "b").to_pylist()
    ['true', 'null']
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    text = as_text(column, name)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        text = _json_escape(text)
    if not (pa.types.is_integer(t) or pa.types.is_decimal(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        text = pc.binary_join_element_wise('"', text, '"', "")
    return pc.fill_null(text, "null")


def _json_escape(text: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """JSON string escaping as whole-column replacements; other control characters only when present."""
    import pyarrow.compute as pc

    if not pc.any(pc.match_substring_regex(text, '["\\\\\x00-\x1f]')).as_py():
        return text  # the common case: nothing to escape
    for raw, escaped in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t")):
        text = pc.replace_substring(text, raw, escaped)
    if pc.any(pc.match_substring_regex(text, "[\x00-\x1f]")).as_py():
        for c in range(0x20):
            text = pc.replace_substring(text, chr(c), f"\\u{c:04x}")
    return text


def csv_quoted(delimiter: str = ",", quote: str = '"') -> str:
    r"""The characters for which Flink's csv format (Jackson's CSV writer) quotes a text, as a regular expression (Java's
    and RE2's): any below the greatest of the delimiter, the quote and the line break (below ``-`` with a comma: a
    space, a comma, a quote, ``+``, a line break...; below ``}`` with a ``|``), and the backslash.

    >>> print(csv_quoted(), csv_quoted("|"))
    [\x00-\x{2c}\\] [\x00-\x{7c}\\]
    """
    safe = max(ord(delimiter), ord(quote), ord("\n")) + 1
    return rf"[\x00-\x{{{safe - 1:x}}}\\]"


def csv_fields(column: pa.ChunkedArray | pa.Array, name: str, delimiter: str = ",", quote: str = '"', null_literal: str = "") -> pa.ChunkedArray | pa.Array:
    """Each value as a CSV field, as Flink's csv format writes it: a text quoted (quotes doubled) when it holds a
    character of ``csv_quoted``; a null ``null_literal`` (Flink's ``csv.null-literal``; empty by default).

    >>> import pyarrow as pa
    >>> print(*csv_fields(pa.array(["plain", 'say "hi", me', "a-b.c", "a+b", " ", None]), "s").to_pylist(), sep="|")
    plain|"say ""hi"", me"|a-b.c|"a+b"|" "|
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    text = as_text(column, name)
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        quoted = pc.binary_join_element_wise(quote, pc.replace_substring(text, quote, quote * 2), quote, "")
        text = pc.if_else(pc.match_substring_regex(text, csv_quoted(delimiter, quote)), quoted, text)
    return pc.fill_null(text, null_literal)


def encode_values(data: pa.Table, fmt: str) -> list[str]:
    """The record values of a batch: one JSON object or CSV line per row, or (raw) the one string column's value.

    >>> import pyarrow as pa
    >>> batch = pa.table({"k": ["a", None], "n": [1, 2]})
    >>> encode_values(batch, "json"), encode_values(batch, "csv"), encode_values(batch.select(["k"]), "raw")
    (['{"k":"a","n":1}', '{"k":null,"n":2}'], ['a,1', ',2'], ['a', None])
    """
    import pyarrow.compute as pc

    names = data.column_names
    if fmt == "raw":
        return raw_column(data, names).to_pylist()
    if fmt == "csv":
        fields = [csv_fields(data.column(i), n) for i, n in enumerate(names)]
        return (pc.binary_join_element_wise(*fields, ",") if len(fields) > 1 else fields[0]).to_pylist()
    pieces: list[Any] = []
    for i, n in enumerate(names):
        pieces += [("{" if i == 0 else ",") + json.dumps(n, ensure_ascii=False) + ":", json_values(data.column(i), n)]
    return pc.binary_join_element_wise(*pieces, "}", "").to_pylist()


def raw_column(data: Any, names: Sequence[str]) -> Any:
    """The one STRING column whose values are a raw-format sink's record values (Flink's raw format)."""
    if len(names) != 1 or str(data.schema.field(names[0]).type) not in ("string", "large_string"):
        raise SinkError(f"a kafka sink in the raw format writes one STRING column as each record's value, got columns {list(names)}")
    return data.column(0)


def encode_keys(data: pa.Table, key: Sequence[str]) -> list[str]:
    """The record keys: the key columns' text joined with ``:``, a null as the empty string."""
    import pyarrow.compute as pc

    parts = [pc.fill_null(as_text(data.column(k), k), "") for k in key]
    return (pc.binary_join_element_wise(*parts, ":") if len(parts) > 1 else parts[0]).to_pylist()


# -- the sink -----------------------------------------------------------------------------------


@dataclass(eq=False)
class KafkaSink(BatchSink):
    """Writes each micro-batch to a Kafka topic: one transaction with a batch marker (exactly-once), or flushed."""

    topic: str
    bootstrap: str = "127.0.0.1:9092"
    format: str = "json"
    key: tuple[str, ...] = ()
    delivery: str = "exactly-once"
    create: bool = False
    partitions: int = 1
    name: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    marker_topic: str = MARKER_TOPIC
    timeout: float = 60.0
    #: "auto": an at-least-once sink is written by Spark's Kafka connector where the session has it; "python": always
    #: by confluent-kafka here. (The exactly-once sink is always funke's: the connector's writer has no transactions.)
    connector: str = "auto"
    #: How the record key is written: "text" (the key columns' text joined with ``:``) or "json" (a JSON object of the
    #: key columns, Flink's upsert-kafka ``key.format`` json).
    key_format: str = "text"
    #: The value leaves the key columns out (Flink's ``value.fields-include`` EXCEPT_KEY).
    value_except_key: bool = False
    #: An updating result's row kinds' column, written by key (Flink's upsert-kafka): ``+I``/``+U`` the row, ``-D`` a
    #: tombstone (the key, no value), ``-U`` nothing where the key's next change in the batch is its ``+U``, else a
    #: tombstone (its update was filtered out: the row is gone). None: every row is a record.
    changes: str | None = None
    kind: ClassVar[str] = "kafka"
    _producer: Any = field(default=None, init=False, repr=False)
    _producer_job: str | None = field(default=None, init=False, repr=False)
    _committed: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _ready: bool = field(default=False, init=False, repr=False)
    _failed: list[str] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if not _TOPIC_NAME.match(self.topic or ""):
            raise PlanError(f"kafka sink topic must be 1-249 of the characters a-z A-Z 0-9 . _ -, got {self.topic!r}")
        if self.format not in FORMATS:
            raise PlanError(f"kafka sink format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.delivery not in DELIVERIES:
            raise PlanError(
                f"kafka sink delivery must be 'exactly-once' (transactions, read them with isolation.level=read_committed) "
                f"or 'at-least-once' (an idempotent producer; a replayed batch is written again), got {self.delivery!r}"
            )
        if self.partitions < 1:
            raise PlanError(f"kafka sink partitions must be at least 1, got {self.partitions}")
        if self.connector not in ("auto", "python"):
            raise PlanError(f"kafka sink connector must be 'auto' or 'python', got {self.connector!r}")
        if self.key_format not in ("text", "json"):
            raise PlanError(f"kafka sink key_format must be 'text' or 'json', got {self.key_format!r}")
        if (self.changes is not None or self.value_except_key) and not self.key:
            raise PlanError("kafka sink: a changelog written by key, or a value without the key, needs key=[...]")
        if not _TOPIC_NAME.match(self.marker_topic or ""):
            raise PlanError(f"kafka sink marker_topic is not a valid topic name: {self.marker_topic!r}")
        self.name = self.name or self.topic

    @property
    def guarantee(self) -> str:  # type: ignore[override]  # per sink, not per class: the user picks it
        return self.delivery

    def describe(self) -> str:
        key = f"key {', '.join(self.key)}" if self.key else "no key"
        named = "" if self.name == self.topic else f", name {self.name}"
        return f"kafka({self.topic}, {self.format}, {key}{named}, at {self.bootstrap}, confluent-kafka)"

    def engine(self) -> str:
        """Which code writes the topic, and its guarantee, for ``explain()``."""
        if self.delivery == "exactly-once":
            return (
                "funke's transactional writer over confluent-kafka: each micro-batch and its marker in one Kafka "
                "transaction (exactly-once for read_committed consumers); Spark's Kafka writer has no transactions"
            )
        if self.connector == "python":
            return "confluent-kafka, an idempotent producer flushed per micro-batch (at-least-once; asked with connector='python')"
        return (
            "Spark's Kafka connector where the session has it, else confluent-kafka: an idempotent producer, "
            "every record acknowledged before the batch commits (at-least-once: a batch replayed after a crash is written again)"
        )

    def transactional_id(self, job: str) -> str:
        """Stable across restarts of the job: a restarted driver's producer fences the one before it."""
        return f"funke-sink:{job}:{self.name}"

    def _where(self) -> str:
        return f"kafka sink '{self.name}'"

    def __getstate__(self) -> dict[str, Any]:
        """Without the producer (it holds librdkafka threads) and what it knew: Spark may pickle a sink into a worker."""
        return {**self.__dict__, "_producer": None, "_producer_job": None, "_committed": {}, "_ready": False, "_failed": []}

    # -- the BatchSink hooks --------------------------------------------------------------------
    def check(self, job: str) -> None:
        """Before the job starts: the broker answers, the topic exists (or is created) and, for exactly-once,
        the marker topic exists and this job's producer has fenced any earlier driver of the job."""
        client = admin(self.bootstrap, self.config, self._where(), SinkError)
        if topic_partitions(client, self.topic, self.bootstrap, self._where(), SinkError) is None:
            if not self.create:
                raise SinkError(f"{self._where()}: {missing_topic(self.topic, self.bootstrap)}")
            ensure_topic(client, self.topic, self.bootstrap, self._where(), SinkError, partitions=self.partitions)
        if self.delivery == "exactly-once":
            ensure_topic(client, self.marker_topic, self.bootstrap, self._where(), SinkError, config=MARKER_TOPIC_CONFIG)
        self._ready = True
        self.producer(job)

    def write_batch(self, df: Any, batch_id: int, job: str) -> None:
        if self.delivery == "exactly-once":
            data, _, query_id = arrow_batch(df, self._where())
        else:  # no marker: Spark Connect's missing query id does not matter
            data, query_id = df.toArrow(), None
        self.write_table(data, job=job, batch_id=batch_id, query_id=query_id)

    def write_table(self, data: pa.Table, *, job: str, batch_id: int, query_id: str | None) -> bool:
        """Write one batch; False when its marker says it was committed before (then nothing is written).

        ``query_id`` None (a bounded run) writes without a marker.
        """
        from confluent_kafka import KafkaException

        if not self._ready:
            self.check(job)
        if data.num_rows == 0:
            return True
        producer = self.producer(job)
        exactly_once = self.delivery == "exactly-once"
        marker = f"{job}:{self.name}:{query_id}" if exactly_once and query_id is not None else None
        if marker is not None and batch_id <= self.last_committed(marker):
            log.info("%s: batch %s of job %s was committed before: skipped", self._where(), batch_id, job)
            return False
        for c in self.key:
            if c not in data.column_names:
                raise SinkError(f"{self._where()}: key column '{c}' is not in the results ({', '.join(data.column_names)})")
        values, keys = self.records(data)
        try:
            if exactly_once:
                producer.begin_transaction()
            self._produce(producer, values, keys)
            if marker is not None:
                producer.produce(self.marker_topic, value=str(batch_id), key=marker, partition=0)
            if exactly_once:
                producer.commit_transaction(self.timeout)
            else:
                left = producer.flush(self.timeout)
                if left or self._failed:
                    why = self._failed[0] if self._failed else f"{left} record(s) not acknowledged within {self.timeout:g} s"
                    raise SinkError(
                        f"{self._where()}: batch {batch_id} of job {job} was not fully written ({why}); a restart writes it again"
                    )
        except (KafkaException, BufferError) as e:
            self._abandon()
            what = "its transaction did not commit" if exactly_once else "some of its records may be written"
            raise SinkError(
                f"{self._where()}: batch {batch_id} of job {job} to topic {self.topic} at {self.bootstrap} failed and {what}, "
                f"so a restart writes it again: {_reason(e)}"
            ) from e
        except BaseException:  # the open transaction must not carry over into the next batch
            self._abandon()
            raise
        if marker is not None:
            self._committed[marker] = batch_id
        return True

    def records(self, data: pa.Table) -> tuple[list[str | None], list[str] | None]:
        """The batch's record values (None: a tombstone) and keys (None: no keys).

        >>> import pyarrow as pa
        >>> t = pa.table({"kind": ["+I", "-U", "+U", "-U", "-D"], "k": ["a", "a", "a", "b", "c"], "n": [1, 1, 2, 5, 7]})
        >>> KafkaSink("t", key=("k",), key_format="json", value_except_key=True, changes="kind").records(t)
        (['{"n":1}', '{"n":2}', None, None], ['{"k":"a"}', '{"k":"a"}', '{"k":"b"}', '{"k":"c"}'])
        >>> KafkaSink("t", key=("k",), key_format="json").records(pa.table({"k": ["a"], "n": [1]}))
        (['{"k":"a","n":1}'], ['{"k":"a"}'])
        """
        dead: list[bool] = []
        # (a JSON key is the record's key for key_format json, and tells the keys apart for a changelog: made once)
        keys = encode_values(data.select(list(self.key)), "json") if self.changes is not None or self.key_format == "json" else None
        if self.changes is not None:
            assert keys is not None
            kinds = data.column(self.changes).to_pylist()
            after: dict[str, str] = {}  # (each key's next change, read from the end)
            kept: list[int] = []
            for i in range(len(kinds) - 1, -1, -1):
                kind, nxt = kinds[i], after.get(keys[i])
                after[keys[i]] = kind
                if kind == "-U" and nxt in ("+U", "+I"):
                    continue  # (an update: its +U follows)
                kept.append(i)
                dead.append(kind in ("-U", "-D"))
            kept.reverse()
            dead.reverse()
            data = data.take(kept).drop_columns([self.changes])
            keys = [keys[i] for i in kept]
        shown = data.drop_columns(list(self.key)) if self.value_except_key else data
        values: list[str | None] = list(encode_values(shown, self.format))
        if dead:
            values = [None if gone else v for v, gone in zip(values, dead, strict=True)]
        if not self.key:
            return values, None
        return values, keys if self.key_format == "json" else encode_keys(data, self.key)

    # -- the producer and the markers --------------------------------------------------------------
    def producer(self, job: str) -> Producer:
        """The sink's producer for ``job`` (created once per run; transactional for exactly-once)."""
        from confluent_kafka import KafkaException, Producer

        if self._producer is not None and self._producer_job == job:
            return self._producer
        self._abandon()
        settings: dict[str, Any] = {
            "partitioner": "murmur2_random",
            "linger.ms": 5,
            "queue.buffering.max.messages": 2_000_000,
            "delivery.report.only.error": True,
            "on_delivery": self._on_delivery,
        }
        if self.delivery == "exactly-once":
            settings |= {"transactional.id": self.transactional_id(job), "transaction.timeout.ms": int(self.timeout * 1000)}
        else:
            settings |= {"enable.idempotence": True}
        producer = Producer(client_config(self.bootstrap, {**settings, **self.config}))
        if self.delivery == "exactly-once":
            try:
                producer.init_transactions(self.timeout)  # fences an earlier producer of this id, aborts its open transaction
            except KafkaException as e:
                raise SinkError(
                    broker_down(
                        self._where(), self.bootstrap, f"init_transactions for {self.transactional_id(job)} failed: {_reason(e)}"
                    )
                ) from e
        self._producer, self._producer_job = producer, job
        return producer

    def last_committed(self, marker: str) -> int:
        """The latest batch id committed under ``marker`` (-1: none); read once, then remembered."""
        import time

        from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

        if marker in self._committed:
            return self._committed[marker]
        consumer = Consumer(
            client_config(
                self.bootstrap,
                {
                    "group.id": "funke-sink-markers",  # never joined or committed: the partition is assigned
                    "isolation.level": "read_committed",
                    "enable.partition.eof": True,
                    "enable.auto.commit": False,
                    **self.config,
                },
            )
        )
        wanted, last = marker.encode(), -1
        deadline = time.monotonic() + self.timeout
        try:
            consumer.assign([TopicPartition(self.marker_topic, 0, OFFSET_BEGINNING)])
            while True:
                if time.monotonic() > deadline:
                    raise SinkError(
                        f"{self._where()}: reading the commit markers in topic {self.marker_topic} at {self.bootstrap} "
                        f"did not reach its end within {self.timeout:g} s"
                    )
                for m in consumer.consume(10_000, timeout=0.5):
                    err = m.error()
                    if err is not None and err.code() == KafkaError._PARTITION_EOF:
                        self._committed[marker] = last
                        return last
                    if err is not None:
                        raise SinkError(
                            f"{self._where()}: cannot read the commit markers in topic {self.marker_topic} at {self.bootstrap}: {err.str()}"
                        )
                    if m.key() == wanted and m.value() is not None:
                        last = max(last, int(m.value()))
        except KafkaException as e:
            raise SinkError(f"{self._where()}: cannot read the commit markers in topic {self.marker_topic}: {_reason(e)}") from e
        finally:
            consumer.close()

    def _produce(self, producer: Producer, values: list[str | None], keys: list[str] | None) -> None:
        produce, topic = producer.produce, self.topic
        if keys is None:
            for v in values:
                try:
                    produce(topic, v)
                except BufferError:
                    self._when_queued(producer, topic, v, None)
        else:
            for v, k in zip(values, keys, strict=True):
                try:
                    produce(topic, v, k)
                except BufferError:
                    self._when_queued(producer, topic, v, k)

    def _when_queued(self, producer: Producer, topic: str, value: str | None, key: str | None) -> None:
        """Produce once librdkafka's queue has room again (it drains as the broker acknowledges)."""
        import time

        deadline = time.monotonic() + self.timeout
        while True:
            producer.poll(0.05)
            try:
                producer.produce(topic, value, key)
                return
            except BufferError:
                if time.monotonic() > deadline:
                    raise

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is not None:  # only failures are reported (delivery.report.only.error)
            self._failed.append(err.str())

    def _abandon(self) -> None:
        """Drop the producer (aborting its open transaction where it can) and what it knew of the markers."""
        producer, self._producer, self._producer_job = self._producer, None, None
        self._committed.clear()
        self._failed.clear()
        if producer is not None and self.delivery == "exactly-once":
            try:
                producer.abort_transaction(min(self.timeout, 10))
            except Exception as e:  # noqa: BLE001  # no open transaction, or the broker is gone: the coordinator aborts it later
                log.debug("%s: abort_transaction: %s", self._where(), e)


def _reason(e: BaseException) -> str:
    err = e.args[0] if e.args else None
    return err.str() if hasattr(err, "str") else str(e)


def kafka(
    topic: str,
    *,
    bootstrap: str = "127.0.0.1:9092",
    format: str = "json",
    key: str | Sequence[str] | None = None,
    delivery: str = "exactly-once",
    create: bool = False,
    partitions: int = 1,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    timeout: float = 60.0,
    connector: str = "auto",
) -> KafkaSink:
    """Kafka sink: one record per result row, exactly-once through transactions with a batch marker.

    ``format`` is ``json`` or ``csv``; ``key`` names the column(s) whose values make the record key
    (None: no key). ``delivery`` is ``exactly-once`` (read the topic with
    ``isolation.level=read_committed``) or ``at-least-once``. A missing topic is an error at start
    unless ``create=True`` (then it is created with ``partitions`` partitions). ``name`` keeps the
    markers and transactional ids of two sinks of one job to the same topic apart; ``config`` adds
    librdkafka settings (security, tuning) to every client of the sink; ``timeout`` bounds a batch's
    commit. ``connector``: ``"auto"`` lets Spark's Kafka connector write an at-least-once sink where the
    session has it (and it must in real-time mode), ``"python"`` keeps confluent-kafka. The module docstring
    gives the encodings and the protocol exactly.
    """
    require("confluent_kafka", "kafka", "kafka")
    keys = (key,) if isinstance(key, str) else tuple(key or ())
    return KafkaSink(
        topic, bootstrap, format, keys, delivery, create, partitions, name or "", dict(config or {}), timeout=timeout,
        connector=connector,
    )
