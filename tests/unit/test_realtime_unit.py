"""``set_latency_mode("realtime")`` while planning, without Spark or a broker: what runs, and each refusal
naming its operator and the reason (``funke.plan.realtime``)."""

from __future__ import annotations

import pytest

import funke as fk
from funke.connectors.tables import table
from funke.functions import KeyedProcessFunction
from funke.plan.realtime import RULES, check_realtime
from funke.triggers import CountTrigger
from funke.windows import EventTimeSessionWindows, TumblingEventTimeWindows

WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(1)).with_timestamp_assigner("ts")
OUT = fk.sinks.kafka("out", key="k", delivery="at-least-once")


def env() -> fk.StreamEnvironment:
    return fk.StreamEnvironment(app="rt-plan").set_latency_mode("realtime")


def events(e: fk.StreamEnvironment, **kw) -> fk.DataStream:
    src = fk.sources.kafka("in", schema="k string, v bigint, ts timestamp", partition_watermarks=False, **kw)
    return e.from_source(src, WM)


def refused(e: fk.StreamEnvironment) -> str:
    with pytest.raises(fk.UnsupportedError) as caught:
        e.explain()
    return str(caught.value)


class Keep(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value


def test_a_job_of_allowed_operators_plans_in_real_time_mode():
    e = env()
    s = events(e).filter(fk.col("v") > 0).select("k", "v", "ts", "v * 2 AS twice")
    other = events(e, starting="latest").select("k", "v", "ts", "v * 3 AS twice")
    joined = s.union(other).join(table([("a", "A")], "k string, name string"), on="k")
    joined.key_by("k").sum("v").sink_to(OUT)
    windowed = events(e).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()
    windowed.sink_to(fk.sinks.kafka("windows", key=["k", "window_start"], delivery="at-least-once"))
    plan = e.explain()
    assert plan.startswith("funke plan (streaming, real-time), 2 sink(s)")
    assert "general" not in plan and " native" not in plan
    assert "one updated row per element" in plan and "upsert stream keyed by key and window" in plan
    assert "Spark's Kafka sink under the real-time trigger: at-least-once" in plan
    assert "notes (real-time mode):" in plan
    # a bounded run is a Spark batch job: the mode does not apply to it
    assert e.explain(bounded=True).startswith("funke plan (batch)")


@pytest.mark.parametrize(
    ("build", "named", "why"),
    [
        (lambda e: events(e).map(lambda r: r), "map <lambda>", "it runs a Python function"),
        (lambda e: events(e).key_by("k").process(Keep(), output_schema="k string, v bigint, ts timestamp"), "process Keep",
         "funke's general path"),
        (lambda e: events(e).key_by("k").reduce(lambda a, b: a), "rolling reduce", "reduce() runs a Python function"),
        (lambda e: events(e).key_by("k").window(EventTimeSessionWindows.with_gap(fk.seconds(5))).count(), "window",
         "runs on funke's general path"),
        (lambda e: events(e).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(5))).trigger(CountTrigger.of(2)).count(),
         "window", "a custom trigger run(s) on funke's general path"),
        (lambda e: e.from_source(fk.sources.kafka("in", schema="k string, v bigint, ts timestamp"), WM), "watermark",
         "give the source partition_watermarks=False"),
        (lambda e: e.from_source(fk.sources.kafka("in", schema="k string, v bigint", events=10)), "source kafka(in",
         "funke's Python data source (events=N or ending= ends a streaming read"),
        (lambda e: e.from_collection([{"k": "a", "v": 1}]), "source collection", "reads only Kafka"),
    ],
)
def test_each_operator_outside_the_mode_is_refused_naming_it(build, named, why):
    e = env()
    build(e).sink_to(OUT)
    message = refused(e)
    assert message.startswith(f"set_latency_mode('realtime'): {named}") and why in message
    assert "run the job in micro-batches" in message


def test_sinks_the_mode_cannot_write_are_refused_with_what_to_do():
    cases = [
        (fk.sinks.files("/tmp/out"), "it writes files(", "writes only to Kafka"),
        (fk.sinks.kafka("out"), "sink kafka(out", "give fk.sinks.kafka(..., delivery='at-least-once')"),
        (fk.sinks.collect(), "sink collect", "writes only to Kafka"),
    ]
    for sink, named, why in cases:
        e = env()
        events(e).sink_to(sink)
        message = refused(e)
        assert named in message and why in message, message


def test_window_updates_need_a_sink_keyed_by_key_and_window():
    e = env()
    events(e).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().sink_to(OUT)
    assert "give the sink key=['k', 'window_start'] (an upsert topic)" in refused(e)


def test_one_aggregation_per_query():
    e = env()
    counted = events(e).key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()
    counted.key_by("k").sum("count").sink_to(OUT)
    assert "Spark's update mode takes one aggregation per query" in refused(e)


def test_a_deduplication_runs_in_the_mode_on_its_own_shuffle_but_not_after_an_aggregation():
    from funke.plan.realtime import shuffles

    e = env()
    events(e).key_by("k").deduplicate().sink_to(OUT)
    plan = e.explain()
    assert "deduplicate by k, first row kept" in plan and "Spark dropDuplicates in real time" in plan
    assert shuffles(e.sinks) == 1  # (a task per shuffle partition: the slots counted for it)
    e = env()
    events(e).key_by("k").count().key_by("k").deduplicate().sink_to(OUT)
    assert refused(e).startswith("set_latency_mode('realtime'): deduplicate by k")


def test_the_table_of_rules_covers_the_allowlisted_operators():
    names = {t.__name__ for t in RULES}
    assert names == {"Source", "Watermark", "Select", "Filter", "Union", "KeyBy", "LookupJoin", "RollingAggregate",
                     "Deduplicate", "WindowAggregate", "Sink"}  # fmt: skip
    check_realtime(())  # nothing to refuse


def test_flink_sql_asks_for_the_mode_with_set_and_gets_the_same_checks():
    from funke.table import StreamTableEnvironment

    e = fk.StreamEnvironment(app="rt-sql")
    t_env = StreamTableEnvironment.create(e)
    t_env.execute_sql("SET 'execution.latency-mode' = 'realtime'")
    assert e.latency_mode == "realtime" and t_env.get_config().get("execution.latency-mode") == "realtime"
    kafka = "'connector' = 'kafka', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    t_env.execute_script(f"""
        CREATE TABLE clicks (user_id STRING, n BIGINT) WITH ({kafka}, 'topic' = 'clicks');
        CREATE TABLE big (user_id STRING, n BIGINT) WITH ({kafka}, 'topic' = 'big', 'sink.delivery-guarantee' = 'at-least-once');
        INSERT INTO big SELECT user_id, n * 2 FROM clicks WHERE n > 10;
    """)
    assert e.explain().startswith("funke plan (streaming, real-time), 1 sink(s)")
    t_env.execute_script(f"""
        CREATE TABLE exact (user_id STRING, n BIGINT) WITH ({kafka}, 'topic' = 'exact');
        INSERT INTO exact SELECT user_id, n FROM clicks;
    """)
    assert "give fk.sinks.kafka(..., delivery='at-least-once')" in refused(e)
    with pytest.raises(fk.PlanError, match="takes 'micro-batch' or 'realtime'"):
        t_env.execute_sql("SET 'execution.latency-mode' = 'continuous'")


def test_select_distinct_over_insert_only_rows_runs_in_the_mode_as_a_deduplication():
    from funke.table import StreamTableEnvironment

    e = fk.StreamEnvironment(app="rt-sql-distinct")
    t_env = StreamTableEnvironment.create(e)
    t_env.execute_sql("SET 'execution.latency-mode' = 'realtime'")
    kafka = "'connector' = 'kafka', 'properties.bootstrap.servers' = '127.0.0.1:9092', 'format' = 'json'"
    t_env.execute_script(f"""
        CREATE TABLE clicks (user_id STRING, page STRING) WITH ({kafka}, 'topic' = 'clicks');
        CREATE TABLE visits (user_id STRING, page STRING)
          WITH ({kafka}, 'topic' = 'visits', 'sink.delivery-guarantee' = 'at-least-once');
        INSERT INTO visits SELECT DISTINCT user_id, page FROM clicks;
    """)
    plan = e.explain()
    assert "deduplicate by user_id, page, first row kept" in plan and "Spark dropDuplicates in real time" in plan
    # insert-only: Kafka takes it (Flink's planner calls it updating). With a state TTL the keys must expire:
    # funke's group aggregation, an updating result as in Flink, which a Kafka table does not take
    t_env.get_config().set("table.exec.state.ttl", "1 h")
    with pytest.raises(fk.UnsupportedError, match="the query's result is updating"):
        t_env.execute_sql("INSERT INTO visits SELECT DISTINCT page, user_id FROM clicks")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["latency", "--source", "kafka", "--mode", "fast"], "'fast': choose micro-batch or realtime"),
        (["latency", "--source", "kafka", "--mode", "realtime", "--rates", "lots"], "give rates as numbers"),
        (["latency", "--source", "kafka", "--mode", "realtime", "--job", "join"], "choose from filter/map, rolling count, window"),
        (["chaos", "--mode", "realtime"], "real-time mode reads and writes Kafka: --source kafka --sink kafka"),
        (["chaos", "--mode", "realtime", "--source", "kafka", "--sink", "kafka", "--job", "window"], "choose filter/map or rolling count"),
    ],
)
def test_the_real_time_benches_refuse_what_they_cannot_run_with_exit_code_2(args, message):
    from typer.testing import CliRunner

    from funke.cli.main import app

    r = CliRunner().invoke(app, ["bench", *args, "--no-write"])
    assert r.exit_code == 2, r.output
    assert message in " ".join(r.output.replace("│", " ").split())


def test_processing_time_is_refused_in_real_time_mode_where_spark_fixes_it_per_long_batch():
    from funke.plan.expr import ProcTime

    e = env()
    events(e).with_column("pt", ProcTime()).sink_to(OUT)
    assert "it reads the processing time (PROCTIME(), current_timestamp())" in refused(e)
    e = env()
    events(e).filter(fk.expr("ts < current_timestamp()")).sink_to(OUT)
    assert "which Spark fixes when it plans a batch" in refused(e)
    e = env()
    events(e).select("k", "v", "ts").filter(fk.col("v") > 1).sink_to(OUT)  # (no clock: runs)
    assert e.explain().startswith("funke plan (streaming, real-time)")
