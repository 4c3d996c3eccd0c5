"""The plan layer on its own: schemas, uids, placement, explain, and the errors users hit. No Spark."""

from __future__ import annotations

import datetime as dt

import pytest

import funke as fk
from funke.semantics.functions import OutputTag
from funke.triggers import CountTrigger
from funke.plan import nodes
from funke.plan.capabilities import GENERAL, NATIVE, place
from funke.plan.types import parse_ddl
from funke.windows import EventTimeSessionWindows, SlidingEventTimeWindows, TumblingEventTimeWindows

WM = fk.WatermarkStrategy.for_bounded_out_of_orderness(fk.seconds(5)).with_timestamp_assigner("ts")
ROWS = [{"k": "a", "v": 1, "ts": dt.datetime(2024, 1, 1)}]


def stream(env=None, watermarks=WM):
    env = env or fk.StreamEnvironment(app="unit")
    return env, env.from_collection(ROWS, watermarks=watermarks)


def test_ddl_round_trip_and_aliases():
    s = parse_ddl("key string, value long, ts timestamp, m map<string, int>")
    assert s.names == ("key", "value", "ts", "m")
    assert [f.dtype for f in s] == ["string", "bigint", "timestamp", "map<string,int>"]
    with pytest.raises(fk.SchemaError, match="name type"):
        parse_ddl("key")


def test_schema_is_derived_through_operators():
    _, s = stream()
    out = s.filter(fk.col("v") > 0).with_column("double_v", fk.col("v") * 2).select("k", "double_v", "ts")
    assert str(out.schema) == "k string, double_v bigint, ts timestamp"


def test_uid_is_stable_and_explicit_uid_wins():
    _, a = stream()
    _, b = stream()
    fa = a.filter(fk.col("v") > 1)
    fb = b.filter(fk.col("v") > 1)
    assert fa.node.uid == fb.node.uid
    assert fa.node.uid != a.filter(fk.col("v") > 2).node.uid
    assert a.filter(fk.col("v") > 1, uid="my-filter").node.uid == "my-filter"


def test_uid_of_python_function_uses_its_name_not_its_id():
    def f(row):
        return row

    _, a = stream()
    _, b = stream()
    assert a.map(f).node.uid == b.map(f).node.uid


def test_nodes_are_immutable():
    _, s = stream()
    with pytest.raises(AttributeError):
        s.node.spec = None  # type: ignore[misc]


def test_window_on_unkeyed_stream_says_what_to_do():
    _, s = stream()
    with pytest.raises(fk.PlanError) as e:
        s.window(TumblingEventTimeWindows.of(fk.seconds(10)))
    assert str(e.value) == (
        "window() needs a keyed stream: call key_by(...) first, or use window_all(...) for one window over all elements"
    )


def test_missing_timestamp_column_is_named():
    env = fk.StreamEnvironment(app="unit")
    with pytest.raises(fk.SchemaError) as e:
        env.from_collection(ROWS, watermarks=WM.with_timestamp_assigner("event_time"))
    assert "event-time column 'event_time' does not exist" in str(e.value)
    assert "available columns: k, v, ts" in str(e.value)


def test_timestamp_column_of_wrong_type_says_how_to_fix():
    env = fk.StreamEnvironment(app="unit")
    with pytest.raises(fk.SchemaError) as e:
        env.from_collection(ROWS, watermarks=WM.with_timestamp_assigner("v"))
    assert "event-time column 'v' must be a timestamp, but it is bigint" in str(e.value)
    assert "unit='ms'" in str(e.value)
    with pytest.raises(fk.SchemaError, match="must be a timestamp, but it is string"):
        env.from_collection(ROWS, watermarks=WM.with_timestamp_assigner("k"))


def test_epoch_millis_event_time_becomes_a_timestamp():
    env = fk.StreamEnvironment(app="unit")
    s = env.from_collection([{"k": "a", "t": 1_000}], watermarks=WM.with_timestamp_assigner("t", unit="ms"))
    assert s.schema.get("t").dtype == "timestamp"
    assert s.node.event_time == "t"


def test_unknown_column_names_it_and_lists_the_others():
    _, s = stream()
    with pytest.raises(fk.SchemaError) as e:
        s.filter(fk.col("vv") > 1)
    assert str(e.value) == "filter: unknown column 'vv' in (col('vv') > lit(1)) (did you mean 'v'?); available columns: k, v, ts"
    with pytest.raises(fk.SchemaError, match="unknown column 'nope'"):
        s.select("k", "nope")
    with pytest.raises(fk.SchemaError, match="unknown column 'kk'"):
        s.key_by("kk")


def test_python_function_output_must_match_declared_schema():
    _, s = stream()
    with pytest.raises(fk.SchemaError) as e:
        s.map(lambda r: {"k": r["k"]}, output_schema="k string, n bigint")
    assert "missing n" in str(e.value) and "declared output: k string, n bigint" in str(e.value)
    with pytest.raises(fk.SchemaError, match="column 'n' is declared bigint but the function returned 'x'"):
        s.map(lambda r: {"k": r["k"], "n": "x"}, output_schema="k string, n bigint")
    with pytest.raises(fk.SchemaError, match="must return a bool"):
        s.filter(lambda r: "yes")
    with pytest.raises(fk.SchemaError, match="iterable of rows"):
        s.flat_map(lambda r: 3, output_schema="k string")
    ok = s.map(lambda r: {"k": r["k"], "n": r["v"] + 1}, output_schema="k string, n bigint")
    assert ok.schema.names == ("k", "n")


def test_window_without_event_time_explains_how_to_get_it():
    env = fk.StreamEnvironment(app="unit")
    s = env.from_collection(ROWS)
    with pytest.raises(fk.PlanError, match="needs event time: pass watermarks= to from_source"):
        s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count()


def test_window_result_schema_is_key_window_and_aggregate():
    _, s = stream()
    out = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).sum("v")
    assert str(out.schema) == "k string, window_start timestamp, window_end timestamp, v bigint"
    out = s.key_by("k").window(SlidingEventTimeWindows.of(fk.seconds(10), fk.seconds(5))).aggregate(n="count", mean=("avg", "v"))
    assert str(out.schema) == "k string, window_start timestamp, window_end timestamp, n bigint, mean double"
    with pytest.raises(fk.SchemaError, match="needs a numeric column"):
        s.key_by("v").window(TumblingEventTimeWindows.of(fk.seconds(10))).sum("k")


@pytest.mark.parametrize(
    ("configure", "path", "why"),
    [
        (lambda w: w, NATIVE, "Spark window aggregation"),
        (lambda w: w.allowed_lateness(fk.seconds(1)), GENERAL, "allowed lateness"),
        (lambda w: w.side_output_late_data(OutputTag("late")), GENERAL, "side output"),
        (lambda w: w.trigger(CountTrigger.of(2)), GENERAL, "custom trigger"),
    ],
)
def test_placement_reads_the_capability_table(configure, path, why):
    _, s = stream()
    out = configure(s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10)))).count()
    p = place(out.node)
    assert p.path == path and why in p.why


def test_dynamic_session_gap_goes_to_the_general_path():
    _, s = stream()
    out = s.key_by("k").window(EventTimeSessionWindows.with_dynamic_gap(lambda e: 1000)).count()
    assert place(out.node).path == GENERAL


def test_explain_shows_tree_paths_and_spark_differences():
    env, s = stream()
    s.filter("v > 0").key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10))).count().collect()
    text = env.explain()
    assert "window TumblingEventTimeWindows(size=10000ms) count()" in text
    assert "native" in text and "why: Spark window aggregation" in text
    assert "one watermark per query" in text and "one micro-batch after the watermark" in text
    assert "batch" in env.explain(bounded=True).splitlines()[0]


def test_sql_string_filter_keeps_schema_and_bool_misuse_is_explained():
    _, s = stream()
    assert s.filter("v > 0 AND k = 'a'").schema.names == ("k", "v", "ts")
    with pytest.raises(fk.PlanError, match="combine conditions with &"):
        s.filter((fk.col("v") > 0) and (fk.col("v") < 3))


def test_execute_without_sink_is_refused():
    env, _ = stream()
    with pytest.raises(fk.PlanError, match="no sink"):
        env.execute()


def test_union_needs_same_columns():
    env, s = stream()
    other = env.from_collection([{"k": "b", "w": 2, "ts": dt.datetime(2024, 1, 1)}])
    with pytest.raises(fk.SchemaError, match="same columns in the same order"):
        s.union(other)


def test_walk_visits_each_node_once_inputs_first():
    env, s = stream()
    f = s.filter("v > 0")
    u = f.union(f)
    u.collect()
    order = nodes.walk(env.sinks)
    assert order.index(f.node) < order.index(u.node)
    assert len(order) == len({id(x) for x in order})


def test_processing_time_windows_and_triggers_plan_on_the_general_path():
    from funke.triggers import ContinuousProcessingTimeTrigger, PurgingTrigger
    from funke.windows import TumblingProcessingTimeWindows

    _, s = stream()
    w = s.key_by("k").window(TumblingEventTimeWindows.of(fk.seconds(10)))
    out = w.trigger(PurgingTrigger.of(ContinuousProcessingTimeTrigger.of(fk.seconds(1)))).count()
    assert place(out.node).path == GENERAL
    pt = s.key_by("k").window(TumblingProcessingTimeWindows.of(fk.seconds(10))).count()
    assert place(pt.node).path == GENERAL and "not an event-time" in place(pt.node).why



def test_a_collection_takes_a_decimal_and_containers_for_their_declared_types_and_refuses_others():
    """As PyFlink's from_elements: a Decimal for a DECIMAL, a tuple, list or Row for a ROW, a list or tuple for an
    ARRAY, a dict for a MAP (their elements are checked by Spark as it stores them); a container for a scalar is not."""
    from decimal import Decimal

    from funke.connectors.sources import collection
    from funke.pyflink.common import Row

    ddl = "d decimal(10,2), r struct<x: int, y: string>, l array<int>, m map<string, int>"
    rows = [(Decimal("1.25"), (2, "x"), [1, 2], {"a": 1}), (None, Row(3, "y"), (4,), {}), (Decimal(2), [5, "z"], [], None)]
    assert len(collection(rows, ddl).rows) == 3
    with pytest.raises(fk.SchemaError, match="column 'n' is declared int but the value \\[1\\] is list"):
        collection([([1],)], "n int")
    with pytest.raises(fk.SchemaError, match="column 'r' is declared struct<x:int> but the value Decimal\\('1'\\) is Decimal"):
        collection([(Decimal(1),)], "r struct<x: int>")
