"""Every PyFlink construct funke's translation cannot map is refused when the job is built, naming the
construct and what to use instead: one case per refusal (no Spark runs: building refuses)."""

from __future__ import annotations

import pytest

from funke.errors import PlanError
from funke.pyflink.common import Configuration, Duration, Encoder, SimpleStringSchema, Types, WatermarkStrategy
from funke.pyflink.datastream import StreamExecutionEnvironment
from funke.pyflink.datastream.connectors import file_system as fs
from funke.pyflink.datastream.connectors import kafka as kf
from funke.pyflink.datastream.execution_mode import RuntimeExecutionMode
from funke.pyflink.datastream.functions import AsyncRetryStrategy, KeyedProcessFunction, SinkFunction, SourceFunction
from funke.pyflink.datastream.window import CountTrigger, GlobalWindows, TumblingEventTimeWindows


def env():
    return StreamExecutionEnvironment.get_execution_environment()


def values():
    return env().from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value


def kafka_source():
    return kf.KafkaSource.builder().set_topics("t").set_value_only_deserializer(SimpleStringSchema()).build()


def batch_over_kafka():
    e = env()
    e.set_runtime_mode(RuntimeExecutionMode.BATCH)
    e.from_source(kafka_source(), None, "kafka").print()
    e._bounded()


def kafka_sink_of_strings():
    sink = (
        kf.KafkaSink.builder()
        .set_record_serializer(kf.KafkaRecordSerializationSchema.builder().set_topic("out").set_value_serialization_schema(SimpleStringSchema()).build())
        .build()
    )
    values().map(str, Types.STRING()).sink_to(sink)


REFUSALS = {
    "broadcast() without a descriptor": (lambda: values().broadcast(), r"broadcast\(\) without a MapStateDescriptor.*broadcast\(MapStateDescriptor"),
    "cache()": (lambda: values().cache(), r"cache\(\).*FileSink"),
    "add_sink": (lambda: values().add_sink(None), r"add_sink.*sink_to\(FileSink / KafkaSink\)"),
    "add_source": (lambda: env().add_source(None), r"add_source.*from_source\(FileSource"),
    "create_input": (lambda: env().create_input(None), r"create_input.*from_collection"),
    "SourceFunction": (lambda: SourceFunction(), r"SourceFunction.*from_collection"),
    "SinkFunction": (lambda: SinkFunction(), r"SinkFunction.*print\(\)"),
    "AsyncRetryStrategy": (lambda: AsyncRetryStrategy.fixed_delay(3, 100), r"AsyncRetryStrategy.*retry inside async_invoke"),
    "unordered_wait_with_retry": (lambda: __import__("funke.pyflink.datastream", fromlist=["x"]).AsyncDataStream.unordered_wait_with_retry(values()), r"unordered_wait_with_retry.*use unordered_wait"),
    "with_watermark_alignment": (lambda: WatermarkStrategy.for_monotonous_timestamps().with_watermark_alignment("g", Duration.of_seconds(1)), r"with_watermark_alignment.*max_rows_per_batch"),
    "set_python_requirements": (lambda: env().set_python_requirements("r.txt"), r"set_python_requirements.*install the requirements"),
    "add_python_archive": (lambda: env().add_python_archive("a.zip"), r"add_python_archive.*spark.archives"),
    "register_cached_file": (lambda: env().register_cached_file("f", "n"), r"register_cached_file.*spark.files"),
    "set_default_savepoint_directory": (lambda: env().set_default_savepoint_directory("/x"), r"set_default_savepoint_directory.*stop_with_savepoint"),
    "an unknown configuration key": (lambda: env().configure(Configuration().set_string("my.option", "1")), r"configuration key 'my.option'.*honours"),
    "BATCH mode over an unbounded source": (batch_over_kafka, r"set_runtime_mode\(BATCH\) with an unbounded source.*set_bounded"),
    "an event-time window without timestamps": (lambda: values().key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Duration.of_seconds(1))), r"needs event time.*assign_timestamps_and_watermarks"),
    "an event-time window over a global window's untimed results": (lambda: values().key_by(lambda v: v[0]).window(GlobalWindows.create()).trigger(CountTrigger.of(2)).reduce(lambda a, b: a)
                                                                    .key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Duration.of_seconds(1))), r"needs event time.*assign_timestamps_and_watermarks"),
    "process(KeyedProcessFunction) unkeyed": (lambda: values().process(Timers()), r"process\(KeyedProcessFunction\) needs a keyed stream.*key_by"),
    "KeyedStream.set_parallelism": (lambda: values().key_by(lambda v: v[0]).set_parallelism(2), r"Set parallelism for KeyedStream"),
    "FileSink OutputFileConfig": (lambda: fs.FileSink.for_row_format("/tmp/x", Encoder.simple_string_encoder()).with_output_file_config(fs.OutputFileConfig.builder().with_part_prefix("prefix").build()), r"OutputFileConfig.*Spark's part files"),
    "FileSink date-time buckets": (lambda: fs.FileSink.for_row_format("/tmp/x", Encoder.simple_string_encoder()).with_bucket_assigner(fs.BucketAssigner.date_time_bucket_assigner()), r"date_time_bucket_assigner.*base_path_bucket_assigner"),
    "FileSink bulk formats": (lambda: fs.FileSink.for_bulk_format("/tmp/x", None), r"for_bulk_format.*for_row_format"),
    "FileSource bulk formats": (lambda: fs.FileSource.for_bulk_file_format(None, "/tmp/x"), r"for_bulk_file_format.*text_line_format"),
    "Kafka committed offsets": (lambda: kf.KafkaOffsetsInitializer.committed_offsets(), r"committed_offsets.*Spark checkpoint"),
    "Kafka topic pattern": (lambda: kf.KafkaSource.builder().set_topic_pattern("t.*"), r"set_topic_pattern.*set_topics"),
    "Kafka stopping at the earliest offsets": (lambda: kf.KafkaSource.builder().set_bounded(kf.KafkaOffsetsInitializer.earliest()),
                                               r"set_bounded\(KafkaOffsetsInitializer.earliest\(\)\) would read nothing"),
    "JSON fail_on_missing_field": (lambda: __import__("funke.pyflink.datastream.formats.json", fromlist=["x"]).JsonRowDeserializationSchema.builder().fail_on_missing_field(), r"fail_on_missing_field: funke reads a missing field as NULL"),
    "KafkaSink of strings": (kafka_sink_of_strings, r"SimpleStringSchema.*JsonRowSerializationSchema"),
    "Kafka topic selector": (lambda: kf.KafkaRecordSerializationSchema.builder().set_topic_selector(None), r"set_topic_selector.*a sink per topic"),
    "pyflink.table catalogs": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).HiveCatalog("h"), r"pyflink.table.HiveCatalog is not translated"),
    "pyflink.table from_data_stream": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).StreamTableEnvironment.create(env()).from_data_stream(env().from_collection([("a", 1)])), r"from_data_stream\(\): the stream's values have no declared type.*output_type=Types.ROW"),
    "pyflink.table to_changelog_stream with a target schema": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).StreamTableEnvironment.create(env()).to_changelog_stream(None, object()), r"target_schema.*select and cast"),
    "pyflink.table to_retract_stream": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).StreamTableEnvironment.create(env()).to_retract_stream(None), r"to_retract_stream.*to_changelog_stream gives"),
    "pyflink.table to_data_stream without a StreamExecutionEnvironment": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).TableEnvironment.create().to_data_stream(None), r"to_data_stream\(\) is StreamTableEnvironment's"),
    "pyflink.table Over windows ending after the current row": (lambda: __import__("funke.pyflink.table.window", fromlist=["x"]).Over.partition_by("k").order_by("ts").following(__import__("funke.pyflink.table.expressions", fromlist=["x"]).row_interval(1)), r"Over.following.*end at the current row"),
    "pyflink.table order_by without fetch in streaming mode": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).TableEnvironment.create().from_elements([(1,)], ["v"]).order_by(__import__("funke.pyflink.table.expressions", fromlist=["x"]).col("v")).execute(), r"without LIMIT in streaming mode: as in Flink.*add LIMIT n \(a Top-N\), or run in batch mode"),
    "pyflink.table offset in streaming mode": (lambda: __import__("funke.pyflink.table", fromlist=["x"]).TableEnvironment.create().from_elements([(1,)], ["v"]).offset(1), r"OFFSET 1 without LIMIT at .* in streaming mode: as in Flink, a stream skips rows only in a Top-N; add LIMIT n, or run in batch mode"),
    "pyflink.table unknown expression method": (lambda: __import__("funke.pyflink.table.expressions", fromlist=["x"]).col("a").bitmap_build, r"'bitmap_build'.*call\('FUNCTION'"),
    "RuntimeContext metrics": (lambda: __import__("funke.semantics.rich", fromlist=["x"]).RuntimeContext("f").get_metrics_group(), r"get_metrics_group.*JobHandle.metrics"),
}


@pytest.mark.parametrize("construct", sorted(REFUSALS))
def test_a_construct_without_a_mapping_is_refused_naming_it_and_what_to_do(construct):
    build, message = REFUSALS[construct]
    with pytest.raises(PlanError, match=message):  # (UnsupportedError, or PlanError for a wrong use)
        build()


def test_the_checkpoint_interval_and_timeout_keys_and_setters_are_funke_s():
    e = env()
    e.configure(Configuration().set_string("execution.checkpointing.interval", "2 s").set_string("execution.checkpointing.timeout", "3 min"))
    config = e.get_checkpoint_config()
    assert (config.get_checkpoint_interval(), config.get_checkpoint_timeout()) == (2_000, 180_000)
    assert (e._fk.checkpoint_interval_ms, e._fk.settings.checkpoint_timeout) == (2_000, 180_000)  # what the job runs with
    config.set_checkpoint_timeout(45_000)
    assert e._fk.settings.checkpoint_timeout == 45_000
    with pytest.raises(PlanError, match="not a duration"):
        e.configure(Configuration().set_string("execution.checkpointing.timeout", "soon"))
    with pytest.raises(ValueError, match="must be positive"):
        config.set_checkpoint_timeout(0)


def test_a_json_deserializer_s_ignore_parse_errors_reaches_funke_s_kafka_source():
    from funke.plan import nodes
    from funke.pyflink.datastream.formats.json import JsonRowDeserializationSchema

    row = Types.ROW_NAMED(["a"], [Types.INT()])
    specs = []
    for lenient in (False, True):
        builder = JsonRowDeserializationSchema.builder().type_info(row)
        schema = (builder.ignore_parse_errors() if lenient else builder).build()
        source = kf.KafkaSource.builder().set_topics("t").set_value_only_deserializer(schema).build()
        stream = env().from_source(source, WatermarkStrategy.no_watermarks(), "kafka")
        specs += [n.spec for n in nodes.walk([stream._base.node]) if isinstance(n, nodes.Source)]
    assert [s.ignore_parse_errors for s in specs] == [False, True]


def test_kafka_stopping_offsets_end_funke_s_kafka_source_and_make_it_bounded():
    """``set_bounded`` and ``set_unbounded`` with latest, a timestamp or offsets give funke's ``kafka(ending=...)``
    (tests/spark/test_sql_kafka.py runs such an end); a source without them stays unbounded."""
    import datetime as dt

    from funke.plan import nodes

    tp = kf.KafkaTopicPartition("t", 1)
    specs = []
    for stop in (None, ("bounded", kf.KafkaOffsetsInitializer.latest()), ("bounded", kf.KafkaOffsetsInitializer.timestamp(1_500)),
                 ("unbounded", kf.KafkaOffsetsInitializer.offsets({tp: 7}))):  # fmt: skip
        builder = kf.KafkaSource.builder().set_topics("t").set_value_only_deserializer(SimpleStringSchema())
        if stop is not None:
            builder = builder.set_bounded(stop[1]) if stop[0] == "bounded" else builder.set_unbounded(stop[1])
        stream = env().from_source(builder.build(), WatermarkStrategy.no_watermarks(), "kafka")
        specs += [n.spec for n in nodes.walk([stream._base.node]) if isinstance(n, nodes.Source)]
    assert [s.ending for s in specs] == [None, "latest", dt.datetime(1970, 1, 1, 0, 0, 1, 500000), (("t/1", 7),)]
    assert [s.bounded for s in specs] == [False, True, True, True]
