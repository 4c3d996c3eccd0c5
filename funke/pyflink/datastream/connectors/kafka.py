"""PyFlink's ``KafkaSource`` / ``KafkaSink`` builders on funke's Kafka connector (``fk.sources.kafka``,
``fk.sinks.kafka``).

Source: ``set_topics``, ``set_bootstrap_servers``, ``set_group_id`` and ``set_property`` (librdkafka
settings), ``set_starting_offsets`` (earliest, latest, a timestamp, explicit offsets),
``set_bounded`` / ``set_unbounded`` with stopping offsets (latest, a timestamp, explicit offsets: the job ends when
every partition is read to them, streaming or bounded: ``kafka(ending=...)``), ``set_value_only_deserializer`` with ``SimpleStringSchema`` (a string per
record), ``JsonRowDeserializationSchema`` or ``CsvRowDeserializationSchema`` (a ``Row`` of its type).
Offsets live in Spark's checkpoint (funke's exactly-once restarts), not in the consumer group.

Sink: ``set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(t)
.set_value_serialization_schema(JsonRowSerializationSchema | CsvRowSerializationSchema))`` and
``set_delivery_guarantee``: EXACTLY_ONCE (funke's transactional sink), AT_LEAST_ONCE.
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import funke as fk
from funke.errors import UnsupportedError
from funke.pyflink.common.serialization import SimpleStringSchema
from funke.pyflink.common.typeinfo import RowTypeInfo, Types
from funke.pyflink.datastream._wire import RowReader, Tail, TextReader

__all__ = [
    "DeliveryGuarantee", "KafkaOffsetResetStrategy", "KafkaOffsetsInitializer", "KafkaRecordSerializationSchema",
    "KafkaRecordSerializationSchemaBuilder", "KafkaSink", "KafkaSinkBuilder", "KafkaSource", "KafkaSourceBuilder",
    "KafkaTopicPartition",
]  # fmt: skip


class DeliveryGuarantee(enum.Enum):
    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


class KafkaOffsetResetStrategy(enum.Enum):
    LATEST = 0
    EARLIEST = 1
    NONE = 2


class KafkaTopicPartition:
    def __init__(self, topic: str, partition: int) -> None:
        self.topic, self.partition = topic, partition


class KafkaOffsetsInitializer:
    """Where reading starts (or, with ``set_bounded``, ends)."""

    def __init__(self, starting: Any) -> None:
        self.starting = starting

    @staticmethod
    def earliest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("earliest")

    @staticmethod
    def latest() -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer("latest")

    @staticmethod
    def timestamp(timestamp: int) -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer(dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=timestamp))

    @staticmethod
    def offsets(offsets: dict[KafkaTopicPartition, int], offset_reset_strategy: Any = None) -> KafkaOffsetsInitializer:
        return KafkaOffsetsInitializer({(tp.topic, tp.partition): off for tp, off in offsets.items()})

    @staticmethod
    def committed_offsets(offset_reset_strategy: Any = None) -> KafkaOffsetsInitializer:
        raise UnsupportedError(
            "KafkaOffsetsInitializer.committed_offsets: funke keeps a job's offsets in its Spark checkpoint (a restarted "
            "job resumes after its last committed micro-batch), not in the consumer group; start from earliest, latest "
            "or a timestamp"
        )


class KafkaSourceBuilder:
    def __init__(self) -> None:
        self._bootstrap = "127.0.0.1:9092"
        self._topics: tuple[str, ...] = ()
        self._starting: Any = "earliest"
        self._ending: Any = None
        self._deserializer: Any = None
        self._props: dict[str, str] = {}

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSourceBuilder:
        self._bootstrap = bootstrap_servers
        return self

    def set_topics(self, *topics: str) -> KafkaSourceBuilder:
        self._topics = tuple(topics)
        return self

    def set_topic_pattern(self, topic_pattern: str) -> KafkaSourceBuilder:
        raise UnsupportedError("KafkaSource set_topic_pattern: funke reads named topics; list them with set_topics(...)")

    def set_partitions(self, partitions: Any) -> KafkaSourceBuilder:
        raise UnsupportedError("KafkaSource set_partitions: funke reads whole topics; use set_topics(...)")

    def set_group_id(self, group_id: str) -> KafkaSourceBuilder:
        self._props["group.id"] = group_id
        return self

    def set_client_id_prefix(self, prefix: str) -> KafkaSourceBuilder:
        self._props["client.id"] = prefix
        return self

    def set_starting_offsets(self, starting_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        self._starting = starting_offsets_initializer.starting
        return self

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        return self._stopping("set_bounded", stopping_offsets_initializer)

    def set_unbounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        """As ``set_bounded``: funke's read ends at the offsets, streaming as bounded (a Flink job in batch mode refuses
        a source set this way; funke runs it)."""
        return self._stopping("set_unbounded", stopping_offsets_initializer)

    def _stopping(self, call: str, stopping: KafkaOffsetsInitializer) -> KafkaSourceBuilder:
        if stopping.starting == "earliest":
            raise UnsupportedError(f"KafkaSource {call}(KafkaOffsetsInitializer.earliest()) would read nothing: stop at latest(), a timestamp or offsets")
        self._ending = stopping.starting
        return self

    def set_value_only_deserializer(self, deserialization_schema: Any) -> KafkaSourceBuilder:
        self._deserializer = deserialization_schema
        return self

    def set_property(self, key: str, value: str) -> KafkaSourceBuilder:
        self._props[key] = value
        return self

    def set_properties(self, props: dict[str, str]) -> KafkaSourceBuilder:
        self._props.update(props)
        return self

    def build(self) -> KafkaSource:
        if not self._topics:
            raise ValueError("KafkaSource needs topics: set_topics(...)")
        if self._deserializer is None:
            raise ValueError("KafkaSource needs a value deserializer: set_value_only_deserializer(SimpleStringSchema())")
        return KafkaSource(self)


class KafkaSource:
    """Records of Kafka topics as values (``env.from_source(kafka_source, watermark_strategy, name)``)."""

    def __init__(self, builder: KafkaSourceBuilder) -> None:
        self._b = builder

    @staticmethod
    def builder() -> KafkaSourceBuilder:
        return KafkaSourceBuilder()

    def _stream(self, env: Any, source_name: str, type_info: Any) -> Any:
        from funke.pyflink.datastream.data_stream import DataStream

        b, d = self._b, self._b._deserializer
        props = {k: v for k, v in b._props.items() if k != "group.id"}
        if isinstance(d, SimpleStringSchema):
            spec = fk.sources.kafka(b._topics, bootstrap=b._bootstrap, format="raw", starting=b._starting, ending=b._ending, **props)
            reader: Any = TextReader("value", d.charset)
            out_type = Types.STRING()
        elif getattr(d, "format", None) in ("json", "csv") and isinstance(getattr(d, "type_info", None), RowTypeInfo):
            row = d.type_info
            ddl = ", ".join(f"`{n}` {t.sql_type}" for n, t in zip(row.get_field_names(), row.field_types))
            lenient = {"ignore_parse_errors": True} if getattr(d, "ignore_parse_errors", False) else {}
            spec = fk.sources.kafka(b._topics, schema=ddl, bootstrap=b._bootstrap, format=d.format, starting=b._starting,
                                    ending=b._ending, **lenient, **props)
            reader, out_type = RowReader(row), row
        else:
            raise UnsupportedError(
                f"KafkaSource value deserializer {type(d).__name__}: funke maps SimpleStringSchema, "
                "JsonRowDeserializationSchema and CsvRowDeserializationSchema (with a Types.ROW_NAMED type)"
            )
        base = env._fk.from_source(spec, name=source_name)
        return DataStream(env, base, type_info=type_info or out_type, reader=reader, known=type_info is None)


class KafkaRecordSerializationSchema:
    def __init__(self, topic: str, value_schema: Any, key_schema: Any) -> None:
        self.topic, self.value_schema, self.key_schema = topic, value_schema, key_schema

    @staticmethod
    def builder() -> KafkaRecordSerializationSchemaBuilder:
        return KafkaRecordSerializationSchemaBuilder()


class KafkaRecordSerializationSchemaBuilder:
    def __init__(self) -> None:
        self._topic: str | None = None
        self._value: Any = None
        self._key: Any = None

    def set_topic(self, topic: str) -> KafkaRecordSerializationSchemaBuilder:
        self._topic = topic
        return self

    def set_topic_selector(self, topic_selector: Any) -> KafkaRecordSerializationSchemaBuilder:
        raise UnsupportedError("KafkaRecordSerializationSchema set_topic_selector: funke's Kafka sink writes one topic; split the stream and add a sink per topic")

    def set_value_serialization_schema(self, value_serialization_schema: Any) -> KafkaRecordSerializationSchemaBuilder:
        self._value = value_serialization_schema
        return self

    def set_key_serialization_schema(self, key_serialization_schema: Any) -> KafkaRecordSerializationSchemaBuilder:
        raise UnsupportedError("KafkaRecordSerializationSchema set_key_serialization_schema: funke's Kafka sink keys records by columns of the row; records here have no key")

    def build(self) -> KafkaRecordSerializationSchema:
        if self._topic is None or self._value is None:
            raise ValueError("KafkaRecordSerializationSchema needs set_topic(...) and set_value_serialization_schema(...)")
        return KafkaRecordSerializationSchema(self._topic, self._value, self._key)


class KafkaSinkBuilder:
    def __init__(self) -> None:
        self._bootstrap = "127.0.0.1:9092"
        self._record: KafkaRecordSerializationSchema | None = None
        self._delivery = DeliveryGuarantee.NONE
        self._props: dict[str, str] = {}

    def set_bootstrap_servers(self, bootstrap_servers: str) -> KafkaSinkBuilder:
        self._bootstrap = bootstrap_servers
        return self

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee) -> KafkaSinkBuilder:
        self._delivery = delivery_guarantee
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> KafkaSinkBuilder:
        self._props["fk.name"] = transactional_id_prefix
        return self

    def set_record_serializer(self, record_serializer: KafkaRecordSerializationSchema) -> KafkaSinkBuilder:
        self._record = record_serializer
        return self

    def set_property(self, key: str, value: str) -> KafkaSinkBuilder:
        self._props[key] = value
        return self

    def build(self) -> KafkaSink:
        if self._record is None:
            raise ValueError("KafkaSink needs set_record_serializer(KafkaRecordSerializationSchema.builder()...build())")
        return KafkaSink(self)


class KafkaSink:
    """Values to a Kafka topic (``stream.sink_to(kafka_sink)``), each a JSON object or CSV line of its Row."""

    def __init__(self, builder: KafkaSinkBuilder) -> None:
        self._b = builder

    @staticmethod
    def builder() -> KafkaSinkBuilder:
        return KafkaSinkBuilder()

    def _attach(self, stream: Any) -> None:
        b = self._b
        assert b._record is not None
        schema = b._record.value_schema
        if isinstance(schema, SimpleStringSchema):
            raise UnsupportedError(
                "KafkaSink with SimpleStringSchema: funke's Kafka sink writes each row as JSON or RFC 4180 CSV, which "
                "would quote a string with commas; serialize with JsonRowSerializationSchema (a Types.ROW_NAMED row) instead"
            )
        row = getattr(schema, "type_info", None)
        if getattr(schema, "format", None) not in ("json", "csv") or not isinstance(row, RowTypeInfo) or row.sql_type is None:
            raise UnsupportedError(
                f"KafkaSink value serializer {type(schema).__name__}: funke maps JsonRowSerializationSchema and "
                "CsvRowSerializationSchema of a Types.ROW_NAMED type of basic fields"
            )
        delivery = "exactly-once" if b._delivery is DeliveryGuarantee.EXACTLY_ONCE else "at-least-once"
        props = {k: v for k, v in b._props.items() if k != "fk.name"}
        ddl = ", ".join(f"`{n}` {t.sql_type}" for n, t in zip(row.get_field_names(), row.field_types))
        columns = stream._chained(Tail("columns", out_type=row), ddl, "KafkaSink")
        columns.sink_to(
            fk.sinks.kafka(b._record.topic, bootstrap=b._bootstrap, format=schema.format, delivery=delivery, name=b._props.get("fk.name"), config=props or None),
            name="KafkaSink",
        )
