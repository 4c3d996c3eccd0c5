"""PyFlink's connectors and runner on funke: FileSource/FileSink with text lines, KafkaSource/KafkaSink with
JSON rows against the real broker, execute_async, event time through a process function, and the
command line (``funke run SCRIPT.py ARGS``: the script's prints alone on stdout)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from funke.bench.pyflink import examples_dir, lines
from funke.pyflink.common import Duration, Encoder, Row, Time, Types, WatermarkStrategy
from funke.pyflink.common.watermark_strategy import TimestampAssigner
from funke.pyflink.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from funke.pyflink.datastream.connectors import file_system as fs
from funke.pyflink.datastream.connectors import kafka as kf
from funke.pyflink.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from funke.pyflink.datastream.window import TumblingEventTimeWindows
from tests.servers import ensure_kafka

pytestmark = pytest.mark.spark


def test_text_files_in_and_out(spark, tmp_path):
    source_dir, out = tmp_path / "in", tmp_path / "out"
    source_dir.mkdir()
    (source_dir / "a.txt").write_text("to be\nor not\n\nto be\n")  # an empty line is a value too
    env = StreamExecutionEnvironment.get_execution_environment()
    lines_ = env.from_source(fs.FileSource.for_record_stream_format(fs.StreamFormat.text_line_format(), str(source_dir)).build(), WatermarkStrategy.no_watermarks(), "files")
    upper = lines_.map(lambda s: (s.upper(), len(s)), Types.TUPLE([Types.STRING(), Types.INT()]))
    upper.sink_to(fs.FileSink.for_row_format(str(out), Encoder.simple_string_encoder()).with_rolling_policy(fs.RollingPolicy.default_rolling_policy()).build())
    env.execute("files")
    written = Counter(line for f in out.glob("part-*") for line in f.read_text().splitlines())
    assert written == Counter(["(TO BE,5)", "(OR NOT,6)", "(,0)", "(TO BE,5)"])  # Java's Tuple2 text, as PyFlink writes it


@pytest.fixture
def topics():
    bootstrap = ensure_kafka()
    names = [f"funke-pyflink-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(n, 1, 1) for n in names]).values():
        f.result(30)
    yield bootstrap, names
    for f in admin.delete_topics(names).values():
        f.exception(30)


def test_kafka_json_rows_in_and_out_exactly_once(spark, topics):
    bootstrap, (source_topic, sink_topic) = topics
    producer = Producer({"bootstrap.servers": bootstrap})
    for name, score in (("ada", 3), ("bob", 5), ("ada", 4)):
        producer.produce(source_topic, json.dumps({"name": name, "score": score}).encode())
    producer.flush(30)
    row = Types.ROW_NAMED(["name", "score"], [Types.STRING(), Types.INT()])
    source = (
        kf.KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(source_topic).set_group_id("g")
        .set_starting_offsets(kf.KafkaOffsetsInitializer.earliest()).set_bounded(kf.KafkaOffsetsInitializer.latest())
        .set_value_only_deserializer(JsonRowDeserializationSchema.builder().type_info(row).build()).build()
    )  # fmt: skip
    sink = (
        kf.KafkaSink.builder().set_bootstrap_servers(bootstrap).set_delivery_guarantee(kf.DeliveryGuarantee.EXACTLY_ONCE)
        .set_record_serializer(kf.KafkaRecordSerializationSchema.builder().set_topic(sink_topic)
                               .set_value_serialization_schema(JsonRowSerializationSchema.builder().with_type_info(row).build()).build())
        .build()
    )  # fmt: skip
    env = StreamExecutionEnvironment.get_execution_environment()
    totals = env.from_source(source, None, "scores").key_by(lambda r: r.name).reduce(lambda a, b: Row(name=a.name, score=a.score + b.score))
    totals.sink_to(sink)
    env.execute("kafka")  # a bounded source: a Spark batch job, reading what the topic held at the start
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    consumer.subscribe([sink_topic])
    got = []
    while len(got) < 3:
        msg = consumer.poll(30)
        assert msg is not None, f"the sink wrote {got}"
        got.append(json.loads(msg.value()))
    consumer.close()
    assert Counter(json.dumps(g, sort_keys=True) for g in got) == Counter(
        json.dumps(d, sort_keys=True) for d in ({"name": "ada", "score": 3}, {"name": "bob", "score": 5}, {"name": "ada", "score": 7})
    )


class Stamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Tag(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value[0], ctx.timestamp()


def test_event_time_goes_on_through_a_process_function_and_execute_async_returns_a_job_client(spark):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    events = env.from_collection([("a", 1_000), ("a", 4_000), ("b", 6_000)], type_info=Types.TUPLE([Types.STRING(), Types.LONG()]))
    stamped = events.assign_timestamps_and_watermarks(WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)).with_timestamp_assigner(Stamp()))
    tagged = stamped.key_by(lambda v: v[0]).process(Tag())  # its rows carry the elements' timestamps
    counts = tagged.key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(lambda x, y: (x[0], x[1] + y[1]))
    collected = counts.execute_and_collect("async")
    assert sorted(collected) == [("a", 5_000), ("b", 6_000)]
    counts2 = env.from_collection([1, 2]).map(lambda v: v * 2)
    counts2.print()
    client = env.execute_async("job-client")
    result = client.get_job_execution_result().result()
    assert result.get_job_id() == client.get_job_id() and client.get_job_status().name == "FINISHED"


def test_funke_run_takes_a_pyflink_script_and_its_arguments_with_only_its_prints_on_stdout(tmp_path):
    text = tmp_path / "words.txt"
    text.write_text("a rose is a rose\nis a rose\n")
    script = examples_dir() / "word_count.py"
    done = subprocess.run(
        [sys.executable, "-c", "from funke.cli.main import main; main()", "run", str(script), "--input", str(text)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    expected = Counter({"(a,3)": 1, "(rose,3)": 1, "(is,2)": 1, "Printing result to stdout. Use --output to specify output path.": 1})
    assert lines(done.stdout) == expected  # and nothing else: Spark's, py4j's and funke's logs are on stderr
    assert "WARN" in done.stderr or "log4j" in done.stderr


def test_funke_run_refuses_a_python_file_that_is_not_a_pyflink_script(tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("print('hello')\n")
    done = subprocess.run([sys.executable, "-c", "from funke.cli.main import main; main()", "run", str(plain)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and "imports no pyflink" in done.stderr
    assert Path(plain).read_text() == "print('hello')\n"
