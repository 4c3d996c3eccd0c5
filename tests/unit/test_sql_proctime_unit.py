"""Flink SQL's ``PROCTIME()`` while planning (no Spark): the processing-time attribute a SELECT or a table's
DDL makes, the windows and deduplications that run on it, its value inside other expressions, and the
errors around it. tests/spark/test_processing_time.py runs them."""

from __future__ import annotations

import pytest

import funke as fk
from funke.plan import nodes
from funke.plan.expr import ProcTime
from funke.table import StreamTableEnvironment
from funke.windows import (
    CumulativeProcessingTimeWindows,
    ProcessingTimeSessionWindows,
    SlidingProcessingTimeWindows,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)


@pytest.fixture
def t_env():
    env = fk.StreamEnvironment(app="sql-proctime-unit")
    t_env = StreamTableEnvironment.create(env)
    wm = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(0)).with_timestamp_assigner("ts")
    t_env.create_temporary_view("ev", env.from_collection([], "k string, ts timestamp, v int", watermarks=wm))
    t_env.create_temporary_view("pv", t_env.sql_query("SELECT k, v, ts, PROCTIME() AS pt FROM ev"))
    return t_env


def _node(table, kind):
    node = table._stream.node
    while not isinstance(node, kind):
        node = node.inputs[0]
    return node


def test_proctime_alone_is_the_views_processing_time_attribute_and_passes_through_projections(t_env):
    pv = t_env.sql_query("SELECT * FROM pv")
    assert pv._stream.node.proc_time == "pt" and pv._stream.node.event_time == "ts"
    assert {f.name: f.dtype for f in pv._stream.schema}["pt"] == "timestamp"
    assert t_env.sql_query("SELECT k, pt FROM pv WHERE v > 1")._stream.node.proc_time == "pt"
    assert t_env.sql_query("SELECT k FROM pv")._stream.node.proc_time is None
    # inside another expression PROCTIME() is a value (the batch's time), not an attribute
    later = t_env.sql_query("SELECT k, PROCTIME() + INTERVAL '1' SECOND AS soon FROM ev")
    assert later._stream.node.proc_time is None and "CURRENT_TIMESTAMP()" in later.explain()


def test_a_tables_computed_column_as_proctime_is_its_attribute():
    env = fk.StreamEnvironment(app="sql-proctime-ddl")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(
        "CREATE TABLE clicks (u STRING, pt AS PROCTIME()) WITH ('connector' = 'datagen', 'number-of-rows' = '10')"
    )
    t = t_env.sql_query("SELECT u, COUNT(*) AS n, window_start FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), "
                        "INTERVAL '5' SECOND)) GROUP BY u, window_start, window_end")
    select = _node(t, nodes.WindowAggregate).input.input
    assert isinstance(select, nodes.Select) and any(isinstance(getattr(e, "expr", None), ProcTime) for e in select.exprs)
    assert _node(t, nodes.WindowAggregate).assigner == TumblingProcessingTimeWindows.of(fk.seconds(5))


@pytest.mark.parametrize(
    ("tvf", "assigner"),
    [
        ("TUMBLE(TABLE pv, DESCRIPTOR(pt), INTERVAL '10' SECOND)", TumblingProcessingTimeWindows.of(fk.seconds(10))),
        ("HOP(TABLE pv, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '10' SECOND)", SlidingProcessingTimeWindows.of(fk.seconds(10), fk.seconds(5))),
        ("CUMULATE(TABLE pv, DESCRIPTOR(pt), INTERVAL '5' SECOND, INTERVAL '10' SECOND)", CumulativeProcessingTimeWindows.of(fk.seconds(10), fk.seconds(5))),
        ("SESSION(TABLE pv PARTITION BY k, DESCRIPTOR(pt), INTERVAL '5' SECOND)", ProcessingTimeSessionWindows.with_gap(fk.seconds(5))),
        ("TUMBLE(TABLE pv, DESCRIPTOR(ts), INTERVAL '10' SECOND)", TumblingEventTimeWindows.of(fk.seconds(10))),
    ],
)
def test_a_window_tvf_on_the_proctime_attribute_runs_on_processing_time(t_env, tvf, assigner):
    t = t_env.sql_query(f"SELECT k, COUNT(*) AS n, window_start FROM TABLE({tvf}) GROUP BY k, window_start, window_end")
    window = _node(t, nodes.WindowAggregate)
    assert window.assigner == assigner and type(window.assigner) is type(assigner)
    if not assigner.is_event_time:
        assert "general" in t.explain()  # (funke's window operator: the batch's time is its clock)


def test_a_legacy_group_window_on_proctime_is_the_processing_time_tvf(t_env):
    t = t_env.sql_query(
        "SELECT k, COUNT(*) AS n, TUMBLE_START(p, INTERVAL '10' SECOND) AS s FROM (SELECT *, PROCTIME() AS p FROM ev) "
        "GROUP BY k, TUMBLE(p, INTERVAL '10' SECOND)"
    )
    assert _node(t, nodes.WindowAggregate).assigner == TumblingProcessingTimeWindows.of(fk.seconds(10)) and t.columns == ("k", "n", "s")


def test_tumble_proctime_is_a_processing_time_attribute_of_each_window_result_in_its_place(t_env):
    t = t_env.sql_query(
        "SELECT k, TUMBLE_PROCTIME(ts, INTERVAL '10' SECOND) AS p, COUNT(*) AS n FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)"
    )
    assert t.columns == ("k", "p", "n") and t._stream.node.proc_time == "p"
    assert {f.name: f.dtype for f in t._stream.schema} == {"k": "string", "p": "timestamp", "n": "bigint"}
    assert _node(t, nodes.WindowAggregate).assigner == TumblingEventTimeWindows.of(fk.seconds(10))
    t_env.create_temporary_view("w", t)
    cascaded = t_env.sql_query("SELECT k, SUM(n) AS n FROM w GROUP BY k, HOP(p, INTERVAL '1' SECOND, INTERVAL '2' SECOND)")
    assert _node(cascaded, nodes.WindowAggregate).assigner == SlidingProcessingTimeWindows.of(fk.seconds(2), fk.seconds(1))
    unnamed = t_env.sql_query("SELECT SESSION_PROCTIME(ts, INTERVAL '5' SECOND), k FROM ev GROUP BY k, SESSION(ts, INTERVAL '5' SECOND)")
    assert unnamed.columns == ("EXPR$0", "k") and unnamed._stream.node.proc_time == "EXPR$0"


@pytest.mark.parametrize(
    ("sql", "error"),
    [
        ("SELECT k, TUMBLE_PROCTIME(ts, INTERVAL '10' SECOND) + INTERVAL '1' SECOND AS x FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)",
         r"TUMBLE_PROCTIME\(...\) inside an expression \(at line 1, column 11\).*alone as a column"),
        ("SELECT k FROM ev GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND) HAVING TUMBLE_PROCTIME(ts, INTERVAL '10' SECOND) > TIMESTAMP '1970-01-01 00:00:00'",
         r"TUMBLE_PROCTIME\(...\) in HAVING \(at line 1, column 70\)"),
        ("SELECT HOP_PROCTIME(ts, INTERVAL '1' SECOND, INTERVAL '2' SECOND) AS x FROM ev GROUP BY TUMBLE(ts, INTERVAL '10' SECOND)",
         r"HOP_PROCTIME\(...\) with a TUMBLE group window.*write TUMBLE_PROCTIME"),
    ],
)
def test_tumble_proctime_inside_an_expression_in_having_or_of_another_window_is_refused_where_it_is(t_env, sql, error):
    with pytest.raises(fk.errors.UnsupportedError, match=error):
        t_env.sql_query(sql)


def test_row_number_on_proctime_keeps_each_keys_first_row_on_spark_or_its_last_as_updates(t_env):
    first = t_env.sql_query("SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM pv) WHERE rn = 1")
    dedup = _node(first, nodes.Deduplicate)  # (Spark's dropDuplicates: insert-only, real-time mode runs it)
    assert not first.updating and dedup.input.keys == ("k",) and first.columns == ("k", "v")
    last = t_env.sql_query(
        "SELECT k, v, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC) AS rn FROM pv) WHERE rn = 1"
    )
    fn = _node(last, nodes.KeyedProcess).function
    assert last.updating and fn.time == "pt" and fn.keep_last and fn.rownum == "rn"
    t_env.get_config().set("table.exec.state.ttl", "1 h")  # (keys that expire: funke's operator)
    first = t_env.sql_query("SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) AS rn FROM pv) WHERE rn = 1")
    fn = _node(first, nodes.KeyedProcess).function
    assert fn.time == "pt" and not fn.keep_last and fn.ttl_ms == 3_600_000


def test_errors_name_the_time_attributes_and_proctimes_arguments(t_env):
    with pytest.raises(fk.errors.PlanError, match=r"must name a time attribute of the view: 'ts' or 'pt'"):
        t_env.sql_query("SELECT COUNT(*) AS n FROM TABLE(TUMBLE(TABLE pv, DESCRIPTOR(v), INTERVAL '1' SECOND)) GROUP BY window_start, window_end")
    t_env.create_temporary_view("plain", t_env.sql_query("SELECT k, v FROM ev"))
    with pytest.raises(fk.errors.PlanError, match=r"add a processing-time one \(pt AS PROCTIME\(\)\)"):
        t_env.sql_query("SELECT COUNT(*) AS n FROM TABLE(TUMBLE(TABLE plain, DESCRIPTOR(v), INTERVAL '1' SECOND)) GROUP BY window_start, window_end")
    with pytest.raises(fk.errors.UnsupportedError, match="PROCTIME\\(\\) takes no arguments"):
        t_env.sql_query("SELECT PROCTIME(1) AS x FROM ev")


def test_a_filesystem_table_as_of_proctime_is_a_lookup_join_by_a_computed_key_and_reads_legacy_descriptors():
    env = fk.StreamEnvironment(app="sql-proctime-lookup")
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(  # (Flink's legacy descriptors, as Nexmark's q13 writes its side input: today's options)
        "CREATE TABLE side (key BIGINT, `value` STRING) WITH ('connector.type' = 'filesystem', "
        "'connector.path' = 'file:///tmp/side.csv', 'format.type' = 'csv')"
    )
    t_env.create_temporary_view("bid", env.from_collection([], "auction bigint, price bigint"))
    t = t_env.sql_query(
        "SELECT B.auction, S.`value` FROM (SELECT *, PROCTIME() AS p FROM bid) B "
        "JOIN side FOR SYSTEM_TIME AS OF B.p AS S ON MOD(B.auction, 100) = S.key"
    )
    join = _node(t, nodes.LookupJoin)
    assert join.table.label == "side" and join.on == ("key",)
    assert (join.table.files.path, join.table.files.format) == ("file:///tmp/side.csv", "csv")
    assert "`auction` % 100" in t.explain() and t.columns == ("auction", "value")
    # read as a stream anywhere else
    assert t_env.sql_query("SELECT `value` FROM side")._stream.node.schema.names == ("value",)
    with pytest.raises(fk.errors.UnsupportedError, match=r"legacy 'connector.type' options .* not 'connector.properties.0.key'"):
        t_env.execute_sql(
            "CREATE TABLE k (v STRING) WITH ('connector.type' = 'kafka', 'connector.properties.0.key' = 'x')"
        )


def test_an_over_aggregation_on_proctime_waits_for_processing_time_and_drops_nothing(t_env):
    from funke.semantics.keyed_process import KeyedProcessOperator
    from funke.table.over import OverAggregate

    t = t_env.sql_query("SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY pt ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM pv")
    fn = _node(t, nodes.KeyedProcess).function
    assert isinstance(fn, OverAggregate) and fn.processing and fn.time == "pt" and not t.updating
    s = fn.calls[0].alias  # (the SUM's column; the SELECT names it s)
    op = KeyedProcessOperator(fn)
    op.advance_watermark(10_000)  # (an event-time watermark past the rows: not late on processing time)
    for v, pt in ((1, 100), (2, 100), (4, 200)):
        assert op.process_element("a", {"k": "a", "v": v, "pt": pt, "ts": 0}) == []  # (each waits for the clock)
    assert [(r.value["v"], r.value[s]) for r in op.advance_processing_time(150)] == [(1, 1), (2, 3)]
    assert [(r.value["v"], r.value[s]) for r in op.advance_processing_time(200)] == [(4, 6)]
